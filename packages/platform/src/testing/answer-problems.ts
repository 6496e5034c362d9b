// The answer guard's list of mismatches in this process (answer-guard.ts fills it; so does
// `startProcess` with what the service processes it started report). Its own module so that
// `startProcess` can add to it without loading the guard, which would hook every app.

/** Mismatches found so far in this process; when it exits, any left fail it. */
export const answerProblems: string[] = [];
