/**
 * French wording of everything that can go wrong (UI rule: human text is French). Each API error
 * code (docs/api.md#error-codes) and each local failure has a sentence; the service's own
 * English message stays available as the technical detail, shown behind "Détails".
 */
import type { PolicyError } from '../../../schemas/api.js';
import type { ApiError } from '../api/api.js';
import { limitProblemsText, limitRequestText } from './limits-model.js';

export interface FrenchError {
  message: string;
  /** The raw technical detail (status, code, the service's message), or null when there is none. */
  detail: string | null;
}

/** One sentence per stable code the service can answer, plus the panel's local codes. */
export const ERROR_SENTENCES: Readonly<Record<string, string>> = {
  invalid_request: 'Le service a refusé la requête : son contenu n\u2019a pas le format attendu. Rien n\u2019a été modifié.',
  invalid_tools: 'Le service a refusé cette liste de tools. Rien n\u2019a été modifié.',
  invalid_conditions:
    'Le service a refusé ces conditions (un tool qui n\u2019est plus autorisé ni sur demande, ou une condition mal formée). Rien n\u2019a été modifié.',
  invalid_limits:
    'Le service a refusé ces limites d\u2019usage (un tool qui n\u2019est plus autorisé ni sur demande, ou une limite mal formée). Rien n\u2019a été modifié.',
  invalid_agent_id:
    'Identifiant d\u2019agent refusé : il est réservé ou contient un caractère interdit (deux-points, barre oblique, espace en tête, caractère de contrôle ou invisible). Rien n\u2019a été modifié.',
  invalid_requester: 'Demandeur refusé : seul un assistant de ticket de ce projet peut recevoir une policy temporaire.',
  unauthorized: 'Jeton refusé : cette action demande le jeton administrateur du service (ou, pour consulter, le jeton de lecture).',
  forbidden:
    'Jeton d\u2019approbation : il sert seulement à répondre aux demandes depuis l\u2019hôte MCP (une fois, pour un temps ou refuser), pas au panneau.',
  forbidden_host: 'Le service n\u2019accepte que les adresses locales : ouvrez le panneau par 127.0.0.1, localhost ou [::1].',
  not_found: 'Adresse inconnue du service : la version du service ne correspond peut-être pas à ce panneau.',
  unknown_project: 'Ce projet n\u2019est plus servi par le service (dossier déplacé ou supprimé ?). Actualisez la liste des projets.',
  revision_mismatch: 'La policy a été modifiée ailleurs depuis son chargement.',
  policy_invalid:
    'La policy de ce projet est invalide : aucune modification n\u2019est possible avant sa réparation, et toutes les décisions sont refusées.',
  payload_too_large: 'Requête trop volumineuse pour le service. Rien n\u2019a été modifié.',
  unsupported_media_type: 'Le service n\u2019a pas compris le format de la requête. Rien n\u2019a été modifié.',
  write_failed: 'Écriture impossible sur le disque (droits, disque plein ou dossier .ideai inutilisable). Rien n\u2019a été modifié.',
  write_conflict:
    'Le fichier a changé sur le disque pendant l\u2019enregistrement : rien n\u2019a été écrit. Réessayez à partir de la version actuelle.',
  rate_limited: 'Trop de demandes en peu de temps : patientez un instant puis réessayez.',
  limit_exceeded: 'Limite du service atteinte : supprimez des éléments inutiles puis réessayez.',
  approval_closed: 'Cette demande d\u2019approbation est déjà close.',
  too_many_streams:
    'Trop de flux d\u2019événements ouverts sur le service : les mises à jour en direct reprendront dès qu\u2019une place se libère.',
  ui_not_built: 'Le panneau n\u2019est pas construit sur ce service (npm run build:ui).',
  internal_error: 'Erreur interne du service : la requête n\u2019a pas été appliquée.',
  written_invalid:
    'Le service a écrit la policy mais la juge lui-même invalide : toutes les décisions de ce projet sont refusées jusqu\u2019à sa réparation. Vos modifications sont conservées.',
  network_error: 'Service injoignable : vérifiez qu\u2019il tourne et que l\u2019adresse est la bonne.',
  unexpected_response: 'Réponse inattendue du service : la version du service ne correspond peut-être pas à ce panneau.',
  client_error: 'Erreur inattendue dans le panneau. Rechargez la page.',
};

/** Sentences by HTTP status, for an answer without a known code (a proxy, an older service). */
const STATUS_SENTENCES: Readonly<Record<number, string>> = {
  400: 'invalid_request',
  401: 'unauthorized',
  403: 'forbidden_host',
  404: 'not_found',
  412: 'revision_mismatch',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
};

/** The French sentence of an API error, and its raw detail for the "Détails" disclosure. */
export function frenchError(error: ApiError): FrenchError {
  const key = ERROR_SENTENCES[error.code] !== undefined ? error.code : (STATUS_SENTENCES[error.status] ?? null);
  let message: string;
  if (key !== null) message = ERROR_SENTENCES[key] ?? '';
  else if (error.status >= 500)
    message = `Le service a rencontré une erreur (HTTP ${error.status}) : la requête n\u2019a peut-être pas été appliquée.`;
  else message = `Réponse inattendue du service (HTTP ${error.status}).`;
  if (error.code === 'invalid_tools') message += invalidToolsSuffix(error.details);
  if (error.code === 'invalid_limits') message += limitProblemsText(error.details);
  if (error.code === 'invalid_request') message += limitRequestText(error.details);
  const status = error.status === 0 ? '' : `HTTP ${error.status} `;
  const details = error.details === undefined ? '' : ` ${JSON.stringify(error.details)}`;
  return { message, detail: `${status}${error.code} : ${error.message}${details}` };
}

function invalidToolsSuffix(details: Record<string, unknown> | undefined): string {
  const list = (key: string): string[] => (Array.isArray(details?.[key]) ? (details[key] as unknown[]).map(String) : []);
  const parts: string[] = [];
  if (list('unknown').length > 0) parts.push(`tools inconnus : ${list('unknown').join(', ')}`);
  if (list('duplicates').length > 0) parts.push(`en double : ${list('duplicates').join(', ')}`);
  if (typeof details?.empty === 'number' && details.empty > 0) parts.push(`${details.empty} nom(s) vide(s)`);
  if (list('conflicts').length > 0) parts.push(`à la fois autorisés et soumis à approbation : ${list('conflicts').join(', ')}`);
  return parts.length === 0 ? '' : ` (${parts.join(' ; ')})`;
}

/** French wording of why a policy file is invalid (the view's `error`), with the raw message as detail. */
export function frenchPolicyError(error: PolicyError): FrenchError {
  const where = [error.line === undefined ? null : `ligne ${error.line}`, error.column === undefined ? null : `colonne ${error.column}`]
    .filter((part) => part !== null)
    .join(', ');
  const at = where === '' ? '' : ` (${where})`;
  const raw = error.message;
  let cause: string;
  const version = /^unsupported version (.*) \(expected 1\)$/.exec(raw);
  const duplicateOverride = /^duplicate override for agent (.*)$/.exec(raw);
  const duplicateKey = /duplicate key "?([^"\s]*)"?/i.exec(raw);
  if (/^invalid JSON/i.test(raw)) cause = `JSON mal formé${at} : le fichier est incomplet ou contient une faute de syntaxe.`;
  else if (version !== null) cause = `version ${version[1] === '(missing)' ? 'absente' : version[1]} non prise en charge (attendue : 1).`;
  else if (duplicateOverride !== null) cause = `deux overrides pour l\u2019agent « ${duplicateOverride[1]} ».`;
  else if (duplicateKey !== null) cause = `clé « ${duplicateKey[1]} » en double${at} : on ne sait pas laquelle vaut.`;
  else if (/^cannot read the file/i.test(raw)) cause = 'le fichier ne peut pas être lu par le service (droits ou type de fichier).';
  else cause = `le document ne respecte pas le format attendu${error.path === undefined ? '' : ` (à ${error.path})`}.`;
  const location = `${error.file}${error.line === undefined ? '' : `:${error.line}`}${error.column === undefined ? '' : `:${error.column}`}`;
  return { message: `Fichier ${error.file} invalide : ${cause}`, detail: `${location} — ${raw}` };
}
