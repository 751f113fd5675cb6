/**
 * One read at a time, and a burst of reasons to read during a read costs exactly one more: the
 * lists the panel reads again on events would otherwise race, and an older answer could land last.
 */
export class SerialRead {
  private reading: Promise<void> | null = null;
  private readAgain = false;

  constructor(private readonly read: () => Promise<void>) {}

  /** Starts a read, or asks for one more after the read in progress; resolves when that one ends. */
  run(): Promise<void> {
    if (this.reading !== null) {
      this.readAgain = true;
      return this.reading;
    }
    this.reading = this.read().finally(() => {
      this.reading = null;
      if (this.readAgain) {
        this.readAgain = false;
        void this.run();
      }
    });
    return this.reading;
  }
}
