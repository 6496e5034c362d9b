import FindMyWay, { type HTTPMethod } from 'find-my-way';
import type { FastifyInstance } from 'fastify';

const METHODS: HTTPMethod[] = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

/**
 * A second router holding every registered path, so that a request Fastify found no route
 * for can be told apart: a known path with another method (405 + Allow) or no path at all
 * (404). Must be attached before any route is registered.
 */
export class RouteIndex {
  private readonly router = FindMyWay({ ignoreTrailingSlash: false });
  private readonly routes: Array<{ method: string; url: string }> = [];

  attach(app: FastifyInstance): void {
    app.addHook('onRoute', (route) => {
      const methods = Array.isArray(route.method) ? route.method : [route.method];
      for (const method of methods) {
        const m = method.toUpperCase() as HTTPMethod;
        if (!METHODS.includes(m) || this.router.hasRoute(m, route.url)) continue;
        this.router.on(m, route.url, () => undefined);
        this.routes.push({ method: m, url: route.url });
      }
    });
  }

  /** Methods the path answers to, in a stable order; empty when the path is unknown. */
  allowedMethods(path: string): string[] {
    return METHODS.filter((m) => this.router.find(m, path) !== null);
  }

  /** Every registered method and path pattern (Fastify syntax, `:param`). */
  list(): ReadonlyArray<{ method: string; url: string }> {
    return this.routes;
  }
}
