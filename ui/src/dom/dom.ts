/**
 * A tiny DOM builder: the panel re-renders itself from its state on every change, so there is no
 * framework; {@link h} builds elements and {@link renderInto} morphs the page into them, so an
 * element that is still there keeps its node, its focus and the text typed in it (the user never
 * notices the re-render, and a pressed button is still the one released).
 */
import morphdom from 'morphdom';
import { showBidiControls } from '../../../schemas/display.js';

export type Child = Node | string | number | false | null | undefined | readonly Child[];
type AttrValue = string | number | boolean | null | undefined | ((event: Event) => void);
export type Attrs = Record<string, AttrValue>;

/** Properties that must be set as DOM properties (not only attributes) to reflect the state. */
const PROPERTY_KEYS = new Set(['checked', 'value', 'disabled', 'indeterminate']);
/** Attributes a person reads (a tooltip, what a screen reader says): shown like text. */
const READ_ATTRIBUTES = new Set([
  'title',
  'aria-label',
  'aria-description',
  'aria-roledescription',
  'aria-valuetext',
  'placeholder',
  'alt',
  'label',
]);

/**
 * Text as the panel shows it: bidirectional controls as escapes, so that a value never reorders
 * what is around it (an issueRef `"\u202e28\u202c"` would read as « #82 »).
 */
export const shownText = showBidiControls;

/** Builds an element: `on<event>` keys add listeners, `true` sets an empty attribute, `false`/`null` skip. */
export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs?: Attrs | null, ...children: Child[]): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    if (typeof value === 'function') {
      listen(element, key.slice(2).toLowerCase(), value);
    } else if (PROPERTY_KEYS.has(key)) {
      (element as unknown as Record<string, unknown>)[key] = value;
      if (value === true) element.setAttribute(key, '');
    } else {
      const text = value === true ? '' : String(value);
      element.setAttribute(key === 'className' ? 'class' : key, READ_ATTRIBUTES.has(key) ? shownText(text) : text);
    }
  }
  append(element, children);
  return element;
}

function append(parent: Node, children: readonly Child[]): void {
  for (const child of children) {
    if (child === undefined || child === null || child === false) continue;
    if (Array.isArray(child)) append(parent, child);
    else if (child instanceof Node) parent.appendChild(child);
    else parent.appendChild(document.createTextNode(typeof child === 'number' ? String(child) : shownText(child as string)));
  }
}

/**
 * The handlers of each element, by event type: a morph keeps the old node and gives it the new
 * render's handlers, and a DOM listener cannot be read back from a node to be moved over.
 */
const handlersOf = new WeakMap<EventTarget, Map<string, (event: Event) => void>>();

/** The one listener per event type every element gets; it calls the element's current handler. */
function dispatch(this: EventTarget, event: Event): void {
  handlersOf.get(this)?.get(event.type)?.(event);
}

function listen(element: Element, type: string, handler: (event: Event) => void): void {
  let handlers = handlersOf.get(element);
  if (handlers === undefined) {
    handlers = new Map();
    handlersOf.set(element, handlers);
  }
  handlers.set(type, handler);
  // Adding the same function twice is a no-op, so a kept node never calls a handler twice.
  element.addEventListener(type, dispatch);
}

/** Gives the kept node `from` what the new render drew in `to` that a morph does not copy. */
function carryOver(from: HTMLElement, to: HTMLElement): void {
  const handlers = handlersOf.get(to);
  if (handlers === undefined) handlersOf.delete(from);
  else {
    handlersOf.set(from, handlers);
    for (const type of handlers.keys()) from.addEventListener(type, dispatch);
  }
  if (from instanceof HTMLInputElement && to instanceof HTMLInputElement) {
    from.indeterminate = to.indeterminate;
    // The panel never draws what is typed in a text field: the text stays while the field stays.
    if ((to.type === 'text' || to.type === 'password') && to.value === '') to.value = from.value;
  }
}

/**
 * Morphs the content of `root` into `content`: elements are matched by `id` (every focusable
 * element the panel renders has a stable one) or by place, kept nodes are updated in place, so
 * the focus and a press in progress survive a re-render.
 */
export function renderInto(root: HTMLElement, content: Child): void {
  const active = document.activeElement;
  const focusedId = active instanceof HTMLElement && root.contains(active) ? active.id : '';
  const next = root.cloneNode(false) as HTMLElement;
  append(next, [content]);
  morphdom(root, next, {
    childrenOnly: true,
    onBeforeElUpdated: (from, to) => {
      carryOver(from, to);
      return true;
    },
  });
  // A kept node the morph had to move (a sibling before it went away) was blurred by the move.
  if (focusedId !== '') {
    const again = document.getElementById(focusedId);
    if (again !== null && again !== document.activeElement) again.focus({ preventScroll: true });
  }
}
