/** Words and ids of the approval requests and temporary grants, shared by their controller and view. */
import type { Approval, ApprovalAnswer } from '../../../schemas/approvals.js';

/** The durations of "Autoriser pendant…". */
export const GRANT_DURATIONS: readonly { seconds: number; label: string; spoken: string }[] = [
  { seconds: 15 * 60, label: '15 min', spoken: '15 minutes' },
  { seconds: 60 * 60, label: '1 h', spoken: '1 heure' },
  { seconds: 8 * 60 * 60, label: '8 h', spoken: '8 heures' },
];

/** A DOM id suffix for a request or grant id. */
export function domKey(id: string): string {
  return encodeURIComponent(id).replace(/%/g, '_');
}

/** What an answer did, in French ("Demande de QA pour idea_memory_write autorisée une fois."). */
export function answeredText(agent: string, tool: string, answer: ApprovalAnswer, ttlSeconds?: number): string {
  const what = `Demande de ${agent} pour ${tool}`;
  if (answer === 'once') return `${what} autorisée une fois.`;
  if (answer === 'deny') return `${what} refusée.`;
  if (answer === 'always') return `${what} autorisée : ${tool} ajouté aux tools autorisés de ${agent}.`;
  const duration = GRANT_DURATIONS.find((entry) => entry.seconds === ttlSeconds)?.spoken ?? `${ttlSeconds ?? 0} secondes`;
  return `${what} autorisée pendant ${duration}.`;
}

/** Where an answer this page did not give came from (" dans la fenêtre de l'agent", …). */
function answeredWhere(approval: Approval): string {
  if (approval.via === 'elicitation') return ' dans la fenêtre de l\u2019agent';
  if (approval.answeredBy === 'approver') return ' avec le jeton d\u2019approbation';
  return ' ailleurs (un autre onglet ou l\u2019API)';
}

/**
 * Why a request left the pending list without this page answering it, in French: answered
 * elsewhere (the agent's host, another tab), expired, or closed by the service (its tool left
 * "Sur demande", or room was made for a declared agent).
 */
export function closedText(agent: string, approval: Approval): string {
  const what = `Demande de ${agent} pour ${approval.tool}`;
  if (approval.status === 'approved') {
    const how =
      approval.answer === 'once'
        ? 'autorisée une fois'
        : approval.answer === 'always'
          ? 'autorisée pour toujours'
          : 'autorisée pour un temps (voir les accords temporaires)';
    return `${what} ${how}${answeredWhere(approval)}.`;
  }
  if (approval.status === 'denied') return `${what} refusée${answeredWhere(approval)}.`;
  if (approval.details?.cause === 'policy_changed') return `${what} fermée : ce tool n\u2019est plus « Sur demande » pour ${agent}.`;
  if (approval.details?.cause === 'displaced')
    return `${what} fermée : la file des demandes était pleine, elle a fait place à un agent déclaré du projet.`;
  return `${what} expirée sans réponse.`;
}
