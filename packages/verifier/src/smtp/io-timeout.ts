/** A time-out that can be cancelled until its callback runs. */
export interface IoTimeout {
  cancel(): void;
}

/**
 * Like `setTimeout`, but the time-out is only declared once the I/O that was already
 * waiting when it fell due has been handled (issue 44). After the event loop stalls (a busy
 * process, a starved CPU) the timers phase runs before the I/O callbacks, so a plain timer
 * would beat an answer that arrived in time: a loopback port's refusal (the kernel answers
 * a SYN to a closed port at once) read as "no answer", a greeting that was there read as a
 * command time-out. `setImmediate` runs after that iteration's pending and poll phases,
 * where such answers are delivered; the caller's answer handler cancels this first.
 */
export function ioTimeout(onTimeout: () => void, ms: number): IoTimeout {
  let immediate: NodeJS.Immediate | null = null;
  let cancelled = false;
  const timer = setTimeout(() => {
    immediate = setImmediate(() => {
      if (!cancelled) onTimeout();
    });
  }, ms);
  return {
    cancel() {
      cancelled = true;
      clearTimeout(timer);
      if (immediate) clearImmediate(immediate);
    },
  };
}
