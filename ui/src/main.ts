/** Entry point of the permissions panel served at `/ui/`. */
import { PermissionsApi, apiRoot } from './api.js';
import { renderInto } from './dom.js';
import { Panel } from './panel.js';
import { startCountdowns } from './countdown.js';
import { PressHold } from './press-hold.js';
import { TokenStore, takeTokenFromLocation } from './token.js';
import { renderPage } from './view.js';

const root = document.getElementById('app');
const announcer = document.getElementById('announcer');
if (root === null || announcer === null) throw new Error('#app or #announcer is missing from index.html');

// First of all: a token given in the address leaves the address bar (and the history entry).
const addressToken = takeTokenFromLocation(window.location, window.history);

const pressHold = new PressHold(document);
let scheduled = false;
/** Coalesces the several state changes of one action into one render (held back during a press). */
function scheduleRender(): void {
  if (scheduled) return;
  scheduled = true;
  queueMicrotask(() => pressHold.run(render));
}

function render(): void {
  scheduled = false;
  renderInto(root as HTMLElement, renderPage(panel));
  // The live region lives outside the re-rendered tree, so a change of its text is announced.
  if ((announcer as HTMLElement).textContent !== panel.state.announcement)
    (announcer as HTMLElement).textContent = panel.state.announcement;
  const focusId = panel.state.focusAfterRender;
  if (focusId !== null && !panel.state.loading) {
    panel.state.focusAfterRender = null;
    document.getElementById(focusId)?.focus();
  }
}

// The API reads the token from the panel's state at each request (the user may change it).
const api = new PermissionsApi(apiRoot(window.location.pathname), () => panel.state.token);
const panel: Panel = new Panel(api, new TokenStore(window.sessionStorage), scheduleRender);
const projectId = new URLSearchParams(window.location.search).get('project') ?? undefined;
if (addressToken !== null) {
  // The live stream starts once the token is checked, so it connects with it.
  void panel.submitToken(addressToken, 'address', false).then(() => {
    panel.live.start();
    return panel.load(projectId);
  });
} else {
  panel.askTokenIfNone();
  panel.live.start();
  void panel.load(projectId);
}

// Remaining times of requests and grants count down in place; one that ends reads the lists again.
startCountdowns(document, () => void panel.requests.refresh());

// Leaving the page (reload, close) with unsaved changes asks the browser's own confirmation.
window.addEventListener('beforeunload', (event) => {
  if (panel.dirty()) event.preventDefault();
});
