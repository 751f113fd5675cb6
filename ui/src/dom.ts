/**
 * A tiny DOM builder: the panel re-renders itself from its state on every change, so there is no
 * framework; {@link h} builds elements and {@link renderInto} swaps them in while keeping the focus
 * and the text typed in inputs (the user never notices the re-render).
 */

export type Child = Node | string | number | false | null | undefined | readonly Child[];
type AttrValue = string | number | boolean | null | undefined | ((event: Event) => void);
export type Attrs = Record<string, AttrValue>;

/** Properties that must be set as DOM properties (not only attributes) to reflect the state. */
const PROPERTY_KEYS = new Set(['checked', 'value', 'disabled', 'indeterminate']);

/** Builds an element: `on<event>` keys add listeners, `true` sets an empty attribute, `false`/`null` skip. */
export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs?: Attrs | null, ...children: Child[]): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    if (typeof value === 'function') {
      element.addEventListener(key.slice(2).toLowerCase(), value);
    } else if (PROPERTY_KEYS.has(key)) {
      (element as unknown as Record<string, unknown>)[key] = value;
      if (value === true) element.setAttribute(key, '');
    } else {
      element.setAttribute(key === 'className' ? 'class' : key, value === true ? '' : String(value));
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
    else parent.appendChild(document.createTextNode(typeof child === 'number' ? String(child) : (child as string)));
  }
}

/**
 * Replaces the content of `root` with `content`. The focused element and the values of text
 * inputs are carried over by `id`, so every focusable element the panel renders has a stable id.
 */
export function renderInto(root: HTMLElement, content: Child): void {
  const active = document.activeElement;
  const focusedId = active instanceof HTMLElement && root.contains(active) ? active.id : '';
  const typed = new Map<string, string>();
  for (const input of root.querySelectorAll<HTMLInputElement>('input[type="password"][id], input[type="text"][id]')) {
    typed.set(input.id, input.value);
  }
  const fragment = document.createDocumentFragment();
  append(fragment, [content]);
  root.replaceChildren(fragment);
  for (const [id, value] of typed) {
    const input = document.getElementById(id);
    if (input instanceof HTMLInputElement && input.value === '') input.value = value;
  }
  if (focusedId !== '') {
    const again = document.getElementById(focusedId);
    if (again !== null && again !== document.activeElement) again.focus({ preventScroll: true });
  }
}
