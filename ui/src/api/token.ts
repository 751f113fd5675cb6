/**
 * Where the panel keeps the token: the browser session only (sessionStorage), never the URL. A
 * token given in the fragment (`/ui#token=...`, never sent to the server) is taken out of the
 * address bar at once, before anything else runs.
 */

const TOKEN_KEY = 'idea-pdp.token';
const TOKEN_DISMISSED_KEY = 'idea-pdp.token-dismissed';

/** The token of a `#token=...` fragment, or null; other fragments are left alone. */
export function tokenFromFragment(hash: string): string | null {
  const params = new URLSearchParams(hash.replace(/^#/, ''));
  const token = params.get('token');
  return token === null || token.trim() === '' ? null : token.trim();
}

/** Takes the token out of the page's URL (no new history entry) and returns it. */
export function takeTokenFromLocation(location: Location, history: History): string | null {
  const token = tokenFromFragment(location.hash);
  if (token === null) return null;
  history.replaceState(history.state, '', `${location.pathname}${location.search}`);
  return token;
}

export class TokenStore {
  constructor(private readonly storage: Storage) {}

  get(): string | null {
    const token = this.storage.getItem(TOKEN_KEY);
    return token === null || token === '' ? null : token;
  }

  set(token: string): void {
    this.storage.setItem(TOKEN_KEY, token);
  }

  clear(): void {
    this.storage.removeItem(TOKEN_KEY);
  }

  /** The user chose to go on without a token for this session: the form is not opened by itself again. */
  dismissed(): boolean {
    return this.storage.getItem(TOKEN_DISMISSED_KEY) !== null;
  }

  dismiss(): void {
    this.storage.setItem(TOKEN_DISMISSED_KEY, '1');
  }
}
