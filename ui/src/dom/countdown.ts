/**
 * Remaining times ("4 min 48 s") of the approval requests and temporary grants, kept current in
 * place: once a second the texts of `[data-until]` elements are rewritten, without re-rendering the
 * page (a re-render every second would close an open select or a text selection).
 */

/** "1 h 05 min", "4 min 08 s", "12 s"; "0 s" once past. */
export function remainingText(ms: number): string {
  const seconds = Math.max(0, Math.ceil(ms / 1000));
  const hours = Math.floor(seconds / 3600);
  const minutes = Math.floor((seconds % 3600) / 60);
  const rest = seconds % 60;
  const two = (n: number): string => String(n).padStart(2, '0');
  if (hours > 0) return `${hours} h ${two(minutes)} min`;
  if (minutes > 0) return `${minutes} min ${two(rest)} s`;
  return `${rest} s`;
}

/** "14:57" in the user's locale time, for an ISO time. */
export function clockText(iso: string): string {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleTimeString('fr-FR', { hour: '2-digit', minute: '2-digit' });
}

/**
 * Rewrites the remaining times every second; `onExpired` runs when one of them reaches zero (at
 * most every few seconds, so a stale entry cannot make it run on every tick).
 */
export function startCountdowns(root: ParentNode, onExpired: () => void, now: () => number = Date.now): () => void {
  let lastExpired = 0;
  const tick = (): void => {
    let expired = false;
    for (const element of root.querySelectorAll<HTMLElement>('[data-until]')) {
      const left = Date.parse(element.dataset.until ?? '') - now();
      const text = remainingText(left);
      if (element.textContent !== text) element.textContent = text;
      if (left <= 0) expired = true;
    }
    if (expired && now() - lastExpired > 5000) {
      lastExpired = now();
      onExpired();
    }
  };
  const timer = setInterval(tick, 1000);
  return () => {
    clearInterval(timer);
  };
}
