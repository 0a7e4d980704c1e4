import { existsSync } from 'node:fs';
import path from 'node:path';
import express, { type NextFunction, type Request, type Response, type Router } from 'express';

/**
 * Serves the built single-page app (`dist/web`): hashed assets with a long cache, and index.html (never
 * cached, so a deploy is picked up at once) for every client route. A missing file with an extension stays a
 * 404 instead of answering HTML where a script or image was expected.
 */
export function consoleSpa(webRoot: string): Router {
  const router = express.Router();
  const indexHtml = path.join(webRoot, 'index.html');
  router.use(
    express.static(webRoot, {
      index: false,
      // /console itself is the app, not a directory to redirect to /console/.
      redirect: false,
      setHeaders: (res, file) => {
        const immutable = file.startsWith(path.join(webRoot, 'assets') + path.sep);
        res.setHeader('Cache-Control', immutable ? 'public, max-age=31536000, immutable' : 'no-cache');
      },
    }),
  );
  router.use((req: Request, res: Response, next: NextFunction) => {
    if ((req.method !== 'GET' && req.method !== 'HEAD') || path.extname(req.path) !== '') return next();
    if (!existsSync(indexHtml)) {
      res
        .status(503)
        .type('text/plain')
        .send('The console is not built: run `npm run build:web` (it writes dist/web).');
      return;
    }
    res.setHeader('Cache-Control', 'no-cache');
    res.sendFile(indexHtml);
  });
  return router;
}
