/**
 * Holds the panel's re-renders while a pointer button or the space bar is down. Live events render
 * at any moment, and a render may move or remove the pressed button (a morph moves a kept node
 * when a sibling before it goes away): between the press and the release, the browser would drop
 * the click.
 */

/** A release the page never hears is dropped after this: a hesitant user or a loaded machine outlasts 1.5 s. */
const MAX_HOLD_MS = 10_000;

export class PressHold {
  private pressed = false;
  private held: (() => void) | null = null;
  private limit: ReturnType<typeof setTimeout> | null = null;

  constructor(target: Pick<Document, 'addEventListener'>, view?: Pick<Window, 'addEventListener'>) {
    target.addEventListener(
      'pointerdown',
      (event) => {
        // Only the primary button clicks; a context menu swallows the release of the others.
        if (event.button === 0) this.press();
      },
      true,
    );
    target.addEventListener(
      'pointerup',
      () => {
        this.releaseSoon();
      },
      true,
    );
    target.addEventListener(
      'pointercancel',
      () => {
        this.releaseSoon();
      },
      true,
    );
    target.addEventListener(
      'keydown',
      (event) => {
        if (event.key === ' ') this.press();
      },
      true,
    );
    target.addEventListener(
      'keyup',
      (event) => {
        if (event.key === ' ') this.releaseSoon();
      },
      true,
    );
    // A press that ends without a release the page hears: a context menu, a drag, another window.
    for (const name of ['contextmenu', 'dragstart'] as const) {
      target.addEventListener(
        name,
        () => {
          this.releaseSoon();
        },
        true,
      );
    }
    view?.addEventListener('blur', () => {
      this.releaseSoon();
    });
    // Bubbling, so after the clicked control's own handler: its render then happens within the click.
    target.addEventListener('click', () => {
      this.release();
    });
  }

  /** Runs `render` now, or once the press is over (the last one asked wins). */
  run(render: () => void): void {
    if (this.pressed) this.held = render;
    else render();
  }

  private press(): void {
    this.pressed = true;
    if (this.limit !== null) clearTimeout(this.limit);
    this.limit = setTimeout(() => {
      this.release();
    }, MAX_HOLD_MS);
  }

  /** A release that no click follows (the pointer left the button) ends the hold on the next task. */
  private releaseSoon(): void {
    setTimeout(() => {
      this.release();
    }, 0);
  }

  private release(): void {
    if (this.limit !== null) clearTimeout(this.limit);
    this.limit = null;
    this.pressed = false;
    const held = this.held;
    this.held = null;
    held?.();
  }
}
