/** Entry point of the permissions panel served at `/ui/`. */
import { PermissionsApi, apiRoot } from './api.js';
import { renderInto } from './dom.js';
import { Panel } from './panel.js';
import { renderPage } from './view.js';

const root = document.getElementById('app');
if (root === null) throw new Error('#app is missing from index.html');

let scheduled = false;
/** Coalesces the several state changes of one action into one render. */
function scheduleRender(): void {
  if (scheduled) return;
  scheduled = true;
  queueMicrotask(() => {
    scheduled = false;
    renderInto(root as HTMLElement, renderPage(panel));
    const focusId = panel.state.focusAfterRender;
    if (focusId !== null && !panel.state.loading) {
      panel.state.focusAfterRender = null;
      document.getElementById(focusId)?.focus();
    }
  });
}

// The API reads the token from the panel's state at each request (the user may change it).
const api = new PermissionsApi(apiRoot(window.location.pathname), () => panel.state.token);
const panel: Panel = new Panel(api, window.sessionStorage, scheduleRender);
void panel.load(new URLSearchParams(window.location.search).get('project') ?? undefined);

// Leaving the page (reload, close) with unsaved changes asks the browser's own confirmation.
window.addEventListener('beforeunload', (event) => {
  if (panel.dirty()) event.preventDefault();
});
