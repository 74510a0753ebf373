/**
 * `npm run bundle`: writes the bundles the package ships, in one process:
 * `lib/webhook/server.js.br` (scripts/bundle-webhook.ts), `lib/models/kubernetes-models.js`
 * (scripts/bundle-models.ts) and `lib/cel/cel.js` (scripts/bundle-cel.ts), and the local runtime's
 * programs (scripts/bundle-runtime.ts); and makes the compiled construct entry, when there is one,
 * load its modules on first use (scripts/lazy-entry.ts). Pass `--verbose` for the bundles' sizes.
 */
import { main as bundleCel } from './bundle-cel';
import { main as bundleModels } from './bundle-models';
import { main as bundleRuntime } from './bundle-runtime';
import { main as bundleWebhook } from './bundle-webhook';
import { main as lazyEntry } from './lazy-entry';

bundleWebhook();
bundleModels();
bundleCel();
bundleRuntime();
lazyEntry();
