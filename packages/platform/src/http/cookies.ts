/** The value of cookie `name` in a request's `Cookie` header (the first one), undefined when absent. */
export function readCookie(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() !== name) continue;
    let value = part.slice(eq + 1).trim();
    if (value.startsWith('"') && value.endsWith('"') && value.length >= 2) value = value.slice(1, -1);
    return value;
  }
  return undefined;
}

/**
 * A `Set-Cookie` value for a session cookie: HttpOnly (no script reads it), SameSite=Strict
 * (no other site's page sends it), Path=/, Secure when asked. No Max-Age: the browser drops
 * it when it closes; the server's own limits end the session anyway. `value` must be
 * cookie-safe (base64url is).
 */
export function sessionCookie(name: string, value: string, secure: boolean): string {
  return `${name}=${value}; HttpOnly; SameSite=Strict; Path=/${secure ? '; Secure' : ''}`;
}

/** A `Set-Cookie` value that removes the session cookie. */
export function clearedCookie(name: string, secure: boolean): string {
  return `${name}=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0; Expires=Thu, 01 Jan 1970 00:00:00 GMT${secure ? '; Secure' : ''}`;
}
