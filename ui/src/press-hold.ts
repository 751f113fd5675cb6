/**
 * Holds the panel's re-renders while a pointer button or the space bar is down. Live events render
 * at any moment, and a render may move or remove the pressed button (a morph moves a kept node
 * when a sibling before it goes away): between the press and the release, the browser would drop
 * the click.
 */

/** A press longer than this (a drag that left the window) no longer holds anything back. */
const MAX_HOLD_MS = 1500;

export class PressHold {
  private pressed = false;
  private held: (() => void) | null = null;
  private limit: ReturnType<typeof setTimeout> | null = null;

  constructor(target: Pick<Document, 'addEventListener'>) {
    target.addEventListener(
      'pointerdown',
      () => {
        this.press();
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
