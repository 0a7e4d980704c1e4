import type { CookieOptions, Request, Response } from 'express';
import type { AppConfig } from '../core/config/app-config.js';
import { SESSION_COOKIE } from './auth.decorators.js';

/** Reads one cookie from the Cookie header (no cookie-parser middleware needed for a single cookie). */
export function readCookie(req: Request, name: string): string | undefined {
  const header = req.headers.cookie;
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const index = part.indexOf('=');
    if (index > 0 && part.slice(0, index).trim() === name) {
      const value = part.slice(index + 1).trim();
      try {
        return decodeURIComponent(value);
      } catch {
        return undefined;
      }
    }
  }
  return undefined;
}

/**
 * The session cookie's name. In production it carries the `__Host-` prefix: browsers then accept it only
 * with Secure, Path=/ and no Domain, so neither a sibling subdomain nor a plain-http page can plant or
 * overwrite it. Outside production (http://localhost, the e2e and browser tests over plain http) the
 * prefix would make browsers drop the cookie, so the plain name is used there.
 */
export function sessionCookieName(config: AppConfig): string {
  return config.isProduction ? `__Host-${SESSION_COOKIE}` : SESSION_COOKIE;
}

/** The token of the request's session cookie, under this deployment's name only. */
export function readSessionCookie(req: Request, config: AppConfig): string | undefined {
  return readCookie(req, sessionCookieName(config));
}

function sessionCookieOptions(req: Request, config: AppConfig): CookieOptions {
  // Secure always in production (TLS is terminated in front of us; never trust "the request looks secure"
  // alone), and over https elsewhere.
  return { httpOnly: true, sameSite: 'lax', secure: config.isProduction || req.secure, path: '/' };
}

/**
 * Sets the session cookie. Max-Age is the idle lifetime (at login), or what is left of the session when its
 * use renews it (the guard): a cookie never outlives the session it carries, so a browser left alone drops it
 * when the server would, and one in use keeps it as long as the server does.
 */
export function setSessionCookie(
  req: Request,
  res: Response,
  config: AppConfig,
  token: string,
  maxAgeSeconds = config.sessionIdleTtlSeconds,
): void {
  res.cookie(sessionCookieName(config), token, { ...sessionCookieOptions(req, config), maxAge: maxAgeSeconds * 1000 });
}

export function clearSessionCookie(req: Request, res: Response, config: AppConfig): void {
  // The guard may have renewed the cookie on this very request (logout is a session route): drop that first.
  const name = sessionCookieName(config);
  const set = res.getHeader('Set-Cookie');
  if (Array.isArray(set))
    res.setHeader(
      'Set-Cookie',
      set.filter((c) => !c.startsWith(`${name}=`)),
    );
  else if (typeof set === 'string' && set.startsWith(`${name}=`)) res.removeHeader('Set-Cookie');
  res.clearCookie(name, sessionCookieOptions(req, config));
}
