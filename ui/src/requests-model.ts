/** Words and ids of the approval requests and temporary grants, shared by their controller and view. */
import type { ApprovalAnswer } from '../../schemas/approvals.js';

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
