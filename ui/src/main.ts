/**
 * Entry point of the permissions panel served at `/ui/`, and its composition root: one store,
 * controllers built from (store, api), views rendered from (state, actions) on every change.
 */
import { bindActions } from './action-routes.js';
import { PermissionsApi, apiRoot } from './api/api.js';
import { ConditionEdits } from './controllers/condition-edits.js';
import { startCountdowns } from './dom/countdown.js';
import { DENIALS_REFRESH_MS, Denials } from './controllers/denials.js';
import { renderInto, shownText } from './dom/dom.js';
import { DraftPreviews } from './controllers/draft-preview.js';
import { Editing } from './controllers/editing.js';
import { LimitEdits } from './controllers/limit-edits.js';
import { LiveSync } from './controllers/live-sync.js';
import { Navigation } from './controllers/navigation.js';
import { PressHold } from './dom/press-hold.js';
import { Requests } from './controllers/requests.js';
import { Servers } from './controllers/servers.js';
import { dirty } from './state/selectors.js';
import { initialState, type PanelState } from './state/state.js';
import { Store } from './state/store.js';
import { TokenStore, takeTokenFromLocation } from './api/token.js';
import { renderPage } from './views/view.js';
import { Writes } from './controllers/writes.js';

const root = document.getElementById('app');
const announcer = document.getElementById('announcer');
const previewAnnouncer = document.getElementById('preview-announcer');
if (root === null || announcer === null || previewAnnouncer === null)
  throw new Error('#app, #announcer or #preview-announcer is missing from index.html');
const page: HTMLElement = root;
const liveRegion: HTMLElement = announcer;
const previewRegion: HTMLElement = previewAnnouncer;

// First of all: a token given in the address leaves the address bar (and the history entry).
const addressToken = takeTokenFromLocation(window.location, window.history);

const tokens = new TokenStore(window.sessionStorage);
const store = new Store(initialState(tokens.get()));
// The API reads the token from the state at each request (the user may change it).
const api = new PermissionsApi(apiRoot(window.location.pathname), () => store.state.token);
const live = new LiveSync(store, api.eventsUrl());
const navigation = new Navigation(store, api, tokens, {
  tokenChanged: () => {
    live.restart();
  },
});
const editing = new Editing(store);
const conditions = new ConditionEdits(store, editing);
const limits = new LimitEdits(store, editing);
const writes = new Writes(store, api, navigation);
const requests = new Requests(store, api, navigation);
const denials = new Denials(store, api);
const previews = new DraftPreviews(store, api);
const servers = new Servers(store, api, navigation);

const actions = bindActions({ navigation, editing, conditions, limits, writes, requests, denials, servers });

const pressHold = new PressHold(document, window);
let scheduled = false;
/** Coalesces the several state changes of one action into one render (held back during a press). */
function scheduleRender(): void {
  if (scheduled) return;
  scheduled = true;
  queueMicrotask(() => {
    pressHold.run(render);
  });
}

function render(): void {
  scheduled = false;
  const state = store.state;
  renderInto(page, renderPage(state, actions));
  // The live region lives outside the re-rendered tree, so a change of its text is announced.
  const announcement = shownText(state.announcement);
  if (liveRegion.textContent !== announcement) liveRegion.textContent = announcement;
  // The draft's preview has its own polite region, so it never overwrites the status messages.
  const preview = shownText(previewText(state.draftPreview));
  if (previewRegion.textContent !== preview) previewRegion.textContent = preview;
  const focusId = state.focusAfterRender;
  if (focusId !== null && !state.loading) {
    // Cleared without a new render: the focus is a one-time move, not something shown.
    store.stage((next) => {
      next.focusAfterRender = null;
    });
    document.getElementById(focusId)?.focus();
  }
}

store.subscribe(scheduleRender);
store.subscribe(() => {
  live.settled();
});
store.subscribe(() => {
  requests.followLoads();
  denials.followLoads();
  servers.followLoads();
  previews.follow();
});

/** What the preview region reads: the latest answer only (nothing while a newer one is awaited). */
function previewText(preview: PanelState['draftPreview']): string {
  if (preview === null || preview.pending) return '';
  return preview.error ?? preview.lines.map((line) => line.text).join(' ');
}

const liveHooks = {
  reload: () => void navigation.reloadView({ live: true }),
  approval: (event: Parameters<Requests['onEvent']>[0]) => {
    requests.onEvent(event);
    // An ask is a denial too: the refusals follow.
    if (event.project === store.state.projectId) void denials.refresh();
  },
  opened: () => {
    void requests.refresh();
    void denials.refresh();
  },
};

const projectId = new URLSearchParams(window.location.search).get('project') ?? undefined;
if (addressToken !== null) {
  // The live stream starts once the token is checked, so it connects with it.
  void navigation.submitToken(addressToken, 'address', false).then(() => {
    live.start(liveHooks);
    return navigation.load(projectId);
  });
} else {
  navigation.askTokenIfNone();
  live.start(liveHooks);
  void navigation.load(projectId);
}

// Remaining times of requests and grants count down in place; one that ends reads the lists again.
startCountdowns(document, () => void requests.refresh());

// The service sends no event for a decision, nor for a proxy's report: both are read again while the page is seen.
setInterval(() => {
  if (document.visibilityState !== 'visible') return;
  void denials.refresh();
  void servers.refresh();
}, DENIALS_REFRESH_MS);

// Leaving the page (reload, close) with unsaved changes asks the browser's own confirmation.
window.addEventListener('beforeunload', (event) => {
  if (dirty(store.state)) event.preventDefault();
});
