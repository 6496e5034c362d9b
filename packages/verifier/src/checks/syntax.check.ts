import { isIPv4 } from 'node:net';
import { domainToASCII, domainToUnicode } from 'node:url';

/**
 * Machine sub-reasons of a syntax failure. The contract reason stays `invalid_syntax`;
 * these say precisely why, for logs, the CLI and support.
 */
export const SYNTAX_ERRORS = [
  'empty',
  'control_character',
  'whitespace',
  'missing_at',
  'missing_local',
  'missing_domain',
  'address_too_long',
  'local_too_long',
  'domain_too_long',
  'label_too_long',
  'leading_dot',
  'trailing_dot',
  'consecutive_dots',
  'invalid_local_char',
  'unclosed_quote',
  'invalid_quoted_char',
  'text_after_quote',
  'empty_quoted_local',
  'invalid_utf8',
  'invalid_domain_char',
  'empty_label',
  'label_hyphen',
  'domain_single_label',
  'tld_numeric',
  'tld_too_short',
  'domain_idna_invalid',
  'ip_literal_invalid',
] as const;
/** One of {@link SYNTAX_ERRORS}. */
export type SyntaxError = (typeof SYNTAX_ERRORS)[number];

/** A well-formed address, split and with its domain in the forms DNS and people need. */
export interface SyntaxOk {
  ok: true;
  /** The local part as written (quotes kept), case preserved. */
  local: string;
  /** Domain in ASCII (punycode for IDN), lowercase; for an IP literal, the bracketed literal. */
  domain: string;
  /** Domain in Unicode, lowercase (equals `domain` for ASCII domains). */
  domainUnicode: string;
  /** The local part is a quoted string. */
  quoted: boolean;
  /** The local part has non-ASCII characters: delivery needs SMTPUTF8 (RFC 6531). */
  smtputf8: boolean;
  /** The domain is an address literal (`[192.0.2.1]`, `[IPv6:…]`): well-formed but not verifiable. */
  ipLiteral: boolean;
}

/** A malformed address and the first rule it breaks. */
export interface SyntaxFail {
  ok: false;
  error: SyntaxError;
}

/** Result of {@link checkSyntax}. */
export type SyntaxOutcome = SyntaxOk | SyntaxFail;

// RFC 5321 §4.5.3.1: local part 64 octets, domain 255 octets, path 256 octets including the
// angle brackets, hence 254 for the bare address.
const MAX_LOCAL = 64;
const MAX_DOMAIN = 255;
const MAX_ADDRESS = 254;
const MAX_LABEL = 63;

// Frozen outcomes: failures are common in bulk lists and must not allocate.
const FAIL = Object.fromEntries(SYNTAX_ERRORS.map((e) => [e, Object.freeze({ ok: false, error: e })])) as Record<
  SyntaxError,
  SyntaxFail
>;

// atext (RFC 5322 §3.2.3) as a lookup table over ASCII.
const ATEXT = new Uint8Array(128);
for (let c = 0x30; c <= 0x39; c++) ATEXT[c] = 1;
for (let c = 0x41; c <= 0x5a; c++) ATEXT[c] = 1;
for (let c = 0x61; c <= 0x7a; c++) ATEXT[c] = 1;
for (const ch of "!#$%&'*+-/=?^_`{|}~") ATEXT[ch.charCodeAt(0)] = 1;

// Letters, digits and hyphen; upper case is folded before the lookup.
const LDH = new Uint8Array(128);
for (let c = 0x30; c <= 0x39; c++) LDH[c] = 1;
for (let c = 0x61; c <= 0x7a; c++) LDH[c] = 1;
LDH[0x2d] = 1;

// Non-ASCII characters allowed in an SMTPUTF8 local part are any well-formed Unicode except
// invisible or layout ones: separators (incl. NBSP and the ideographic space), controls,
// format characters (zero-width joiners, bidi marks), private use and unassigned code points.
// RFC 6531 would allow more; no mail system a user types into should.
const BAD_UNICODE = /[\p{Z}\p{Cc}\p{Cf}\p{Co}\p{Cn}\p{Cs}]/u;
// In a `u` regex \p{Cs} only matches unpaired surrogates: a string that is not valid UTF-16.
const LONE_SURROGATE = /\p{Cs}/u;
// IDNA2008 only allows letters, marks and digits (plus hyphen) in labels; UTS #46 as the URL
// standard applies it lets symbols such as © through, which no registry would sell.
const IDN_TEXT = /^[\p{L}\p{M}\p{Nd}.-]+$/u;

/** Octets of `s` in UTF-8, counted without allocating. */
function utf8Length(s: string, start: number, end: number): number {
  let n = 0;
  for (let i = start; i < end; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff) {
      n += 4;
      i++;
    } else n += 3;
  }
  return n;
}

/**
 * Checks an address the way mail systems accept it: RFC 5321 Mailbox (dot-atom or quoted
 * local part, domain or address literal) with the RFC 6531 extension for UTF-8 local parts,
 * IDN domains (IDNA via the WHATWG URL rules, so the domain must already be in its canonical
 * Unicode form), and the RFC 5321 length limits counted in octets of the wire form. No
 * comments, folding white space or obsolete syntax: those belong to message headers, not to
 * an address someone types. Surrounding spaces and tabs are ignored.
 */
export function checkSyntax(input: string): SyntaxOutcome {
  let start = 0;
  let end = input.length;
  while (start < end && (input.charCodeAt(start) === 0x20 || input.charCodeAt(start) === 0x09)) start++;
  while (end > start && (input.charCodeAt(end - 1) === 0x20 || input.charCodeAt(end - 1) === 0x09)) end--;
  if (start === end) return FAIL.empty;
  // Every character is at least one octet of the wire form (UTF-8, or the longer punycode of
  // an IDN domain), so a longer input cannot fit: stop before scanning megabytes.
  if (end - start > MAX_ADDRESS) return FAIL.address_too_long;

  // Local part: either a quoted string or a dot-atom; `at` is the separating '@'.
  let at: number;
  let quoted = false;
  let nonAscii = false;
  if (input.charCodeAt(start) === 0x22) {
    quoted = true;
    let i = start + 1;
    for (;;) {
      if (i >= end) return FAIL.unclosed_quote;
      const c = input.charCodeAt(i);
      if (c === 0x22) break;
      if (c === 0x5c) {
        // quoted-pair: a backslash and one printable ASCII character or space (RFC 5321 quoted-pairSMTP)
        if (i + 1 >= end) return FAIL.unclosed_quote;
        const n = input.charCodeAt(i + 1);
        if (n < 0x20 || n > 0x7e) return n < 0x20 || n === 0x7f ? FAIL.control_character : FAIL.invalid_quoted_char;
        i += 2;
        continue;
      }
      if (c < 0x20 || c === 0x7f) return FAIL.control_character;
      if (c >= 0x80) nonAscii = true;
      i++;
    }
    if (i === start + 1) return FAIL.empty_quoted_local;
    at = i + 1;
    if (at >= end || input.charCodeAt(at) !== 0x40) return at >= end ? FAIL.missing_at : FAIL.text_after_quote;
    if (nonAscii) {
      const content = input.slice(start + 1, i);
      // Spaces are legal inside quotes; every other separator or invisible character is not.
      if (BAD_UNICODE.test(content.replace(/ /g, ''))) {
        return LONE_SURROGATE.test(content) ? FAIL.invalid_utf8 : FAIL.invalid_quoted_char;
      }
    }
  } else {
    let prevDot = true; // a leading dot is an error
    let i = start;
    for (; i < end; i++) {
      const c = input.charCodeAt(i);
      if (c === 0x40) break;
      if (c < 0x80) {
        if (c === 0x2e) {
          if (i === start) return FAIL.leading_dot;
          if (prevDot) return FAIL.consecutive_dots;
          prevDot = true;
          continue;
        }
        prevDot = false;
        if (ATEXT[c] === 1) continue;
        if (c < 0x20 || c === 0x7f) return FAIL.control_character;
        if (c === 0x20) return FAIL.whitespace;
        return FAIL.invalid_local_char;
      }
      prevDot = false;
      nonAscii = true;
    }
    if (i === end) return FAIL.missing_at;
    if (i === start) return FAIL.missing_local;
    if (prevDot) return FAIL.trailing_dot;
    at = i;
    if (nonAscii) {
      const local = input.slice(start, at);
      if (BAD_UNICODE.test(local)) {
        if (LONE_SURROGATE.test(local)) return FAIL.invalid_utf8;
        return /[\p{Z}]/u.test(local) ? FAIL.whitespace : FAIL.invalid_local_char;
      }
    }
  }
  const localOctets = nonAscii ? utf8Length(input, start, at) : at - start;
  if (localOctets > MAX_LOCAL) return FAIL.local_too_long;

  const dStart = at + 1;
  if (dStart >= end) return FAIL.missing_domain;

  // Address literal: syntactically fine, but there is no domain to look up.
  if (input.charCodeAt(dStart) === 0x5b) {
    if (input.charCodeAt(end - 1) !== 0x5d) return FAIL.ip_literal_invalid;
    const literal = input.slice(dStart + 1, end - 1);
    if (!isAddressLiteral(literal)) return FAIL.ip_literal_invalid;
    const domain = input.slice(dStart, end);
    if (localOctets + 1 + domain.length > MAX_ADDRESS) return FAIL.address_too_long;
    return { ok: true, local: input.slice(start, at), domain, domainUnicode: domain, quoted, smtputf8: nonAscii, ipLiteral: true };
  }

  // Domain: scan once; plain ASCII LDH domains need no IDNA processing.
  let asciiOnly = true;
  let hasUpper = false;
  for (let i = dStart; i < end; i++) {
    const c = input.charCodeAt(i);
    if (c >= 0x80) {
      asciiOnly = false;
      continue;
    }
    if (c >= 0x41 && c <= 0x5a) {
      hasUpper = true;
      continue;
    }
    if (LDH[c] === 1 || c === 0x2e) continue;
    if (c < 0x20 || c === 0x7f) return FAIL.control_character;
    if (c === 0x20) return FAIL.whitespace;
    return FAIL.invalid_domain_char;
  }
  let domain = input.slice(dStart, end);
  if (hasUpper || !asciiOnly) domain = domain.toLowerCase();
  let domainUnicode = domain;
  if (!asciiOnly) {
    if (BAD_UNICODE.test(domain)) return /[\p{Z}]/u.test(domain) ? FAIL.whitespace : FAIL.invalid_domain_char;
    const nfc = domain.normalize('NFC');
    const ascii = domainToASCII(nfc);
    // A domain that IDNA maps to something else (full-width letters, compatibility forms)
    // is not what the user's mail system would send to: refuse rather than guess.
    if (ascii === '' || domainToUnicode(ascii) !== nfc || !IDN_TEXT.test(nfc)) return domainFail(nfc);
    domainUnicode = nfc;
    domain = ascii;
  }
  const structural = checkLabels(domain);
  if (structural !== null) return structural;
  if (asciiOnly && domain.includes('xn--')) {
    // Punycode labels must decode and re-encode to themselves.
    const unicode = domainToUnicode(domain);
    if (unicode === '' || domainToASCII(unicode) !== domain || !IDN_TEXT.test(unicode)) return FAIL.domain_idna_invalid;
    domainUnicode = unicode;
  }
  if (domain.length > MAX_DOMAIN) return FAIL.domain_too_long;
  if (localOctets + 1 + domain.length > MAX_ADDRESS) return FAIL.address_too_long;
  return { ok: true, local: input.slice(start, at), domain, domainUnicode, quoted, smtputf8: nonAscii, ipLiteral: false };
}

/** Why IDNA refused a Unicode domain: report the structural problem when there is one. */
function domainFail(domain: string): SyntaxFail {
  return checkLabels(domain) ?? FAIL.domain_idna_invalid;
}

/** Label rules on a lowercase domain (ASCII, or Unicode for error reporting only). */
function checkLabels(domain: string): SyntaxFail | null {
  const n = domain.length;
  if (domain.charCodeAt(0) === 0x2e) return FAIL.leading_dot;
  if (domain.charCodeAt(n - 1) === 0x2e) return FAIL.trailing_dot;
  let labelStart = 0;
  let dots = 0;
  for (let i = 0; i <= n; i++) {
    if (i < n && domain.charCodeAt(i) !== 0x2e) continue;
    const len = i - labelStart;
    if (len === 0) return FAIL.consecutive_dots;
    if (len > MAX_LABEL) return FAIL.label_too_long;
    if (domain.charCodeAt(labelStart) === 0x2d || domain.charCodeAt(i - 1) === 0x2d) return FAIL.label_hyphen;
    if (i < n) {
      dots++;
      labelStart = i + 1;
    }
  }
  if (dots === 0) return FAIL.domain_single_label;
  // TLD: no all-numeric TLD exists (it would read as an IP address), nor a one-letter one.
  let numeric = true;
  for (let i = labelStart; i < n; i++) {
    const c = domain.charCodeAt(i);
    if (c < 0x30 || c > 0x39) {
      numeric = false;
      break;
    }
  }
  if (numeric) return FAIL.tld_numeric;
  if (n - labelStart < 2) return FAIL.tld_too_short;
  return null;
}

const HEX_GROUP = /^[0-9a-f]{1,4}$/i;

/** RFC 5321 §4.1.3 address literals: IPv4, or `IPv6:` with its full/compressed/v4 forms. */
function isAddressLiteral(literal: string): boolean {
  if (/^\d{1,3}(\.\d{1,3}){3}$/.test(literal)) return isIPv4(literal);
  if (!/^ipv6:/i.test(literal)) return false;
  let v6 = literal.slice(5);
  if (v6.includes(':::')) return false;
  let maxGroups = 8;
  const lastColon = v6.lastIndexOf(':');
  const tail = v6.slice(lastColon + 1);
  if (tail.includes('.')) {
    // IPv6v4 forms: up to 6 groups (or 4 around "::") followed by a dotted quad
    if (!isIPv4(tail)) return false;
    maxGroups = 6;
    v6 = v6.slice(0, lastColon + 1);
    if (!v6.endsWith('::')) v6 = v6.slice(0, -1);
  }
  const parts = v6.split('::');
  if (parts.length > 2) return false;
  const groups = (s: string): string[] | null => {
    if (s === '') return [];
    const g = s.split(':');
    return g.every((x) => HEX_GROUP.test(x)) ? g : null;
  };
  if (parts.length === 1) {
    const g = groups(parts[0] ?? '');
    return g !== null && g.length === maxGroups;
  }
  const left = groups(parts[0] ?? '');
  const right = groups(parts[1] ?? '');
  if (left === null || right === null) return false;
  // "::" stands for at least two groups of zeros (RFC 5321 IPv6-comp)
  return left.length + right.length <= maxGroups - 2;
}
