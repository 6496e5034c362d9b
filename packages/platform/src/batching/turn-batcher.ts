interface Waiter<T, R> {
  item: T;
  resolve: (result: R) => void;
  reject: (err: unknown) => void;
}

/**
 * Gathers the calls made during one turn of the event loop, grouped by key, and hands each
 * group to `run` once, when the turn ends (`setImmediate`). Requests that arrive together —
 * an HTTP server under load reads many sockets per turn — then share one database statement
 * instead of paying for one each; an idle server adds microseconds.
 *
 * A call only ever joins a group whose work has not started, so its answer is never older
 * than the call: what was committed before the call is seen.
 */
export class TurnBatcher<T, R> {
  private groups = new Map<string, Array<Waiter<T, R>>>();
  private scheduled = false;

  /** `run` answers one result per item, in the items' order. */
  constructor(private readonly run: (key: string, items: T[]) => Promise<R[]>) {}

  add(key: string, item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      const group = this.groups.get(key);
      if (group) group.push({ item, resolve, reject });
      else this.groups.set(key, [{ item, resolve, reject }]);
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  private flush(): void {
    const groups = this.groups;
    this.groups = new Map();
    this.scheduled = false;
    for (const [key, waiters] of groups) {
      let work: Promise<R[]>;
      try {
        work = this.run(
          key,
          waiters.map((w) => w.item),
        );
      } catch (err) {
        work = Promise.reject(err);
      }
      work.then(
        (results) => {
          if (results.length !== waiters.length) throw new Error(`TurnBatcher: ${results.length} results for ${waiters.length} calls`);
          waiters.forEach((w, i) => w.resolve(results[i]!));
        },
      ).catch((err: unknown) => {
        for (const w of waiters) w.reject(err);
      });
    }
  }
}
