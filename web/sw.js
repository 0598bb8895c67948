// The page offline: once opened, it loads and predicts with no server and no network. Network first, so a new
// build is used as soon as it is served; the cache when nothing answers. /api is never cached: measurements are
// live or absent.
const CACHE = 'roofline-v1';
const ASSET = /(?:href|src)="([^"]+\.(?:js|wasm|css|webmanifest|svg))"/g;

self.addEventListener('install', (event) => {
  self.skipWaiting();
  event.waitUntil((async () => {
    const cache = await caches.open(CACHE);
    const index = await fetch('./', { cache: 'no-store' });
    const html = await index.clone().text();
    await cache.put('./', index);
    const assets = [...html.matchAll(ASSET)].map((m) => m[1]);
    await cache.addAll([...new Set(assets)]);
  })());
});

self.addEventListener('activate', (event) => event.waitUntil(self.clients.claim()));

self.addEventListener('fetch', (event) => {
  const request = event.request;
  const url = new URL(request.url);
  if (request.method !== 'GET' || url.origin !== self.location.origin || url.pathname.startsWith('/api')) {
    return;
  }
  const page = request.mode === 'navigate';
  event.respondWith(
    fetch(request)
      .then((response) => {
        if (response.ok) {
          const copy = response.clone();
          caches.open(CACHE).then((cache) => cache.put(page ? './' : request, copy));
        }
        return response;
      })
      .catch(async () => (await caches.match(page ? './' : request)) || Response.error()),
  );
});
