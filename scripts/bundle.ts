/**
 * `npm run bundle`: writes both bundles the package ships, in one process:
 * `lib/webhook/server.js.gz` (scripts/bundle-webhook.ts) and `lib/models/kubernetes-models.js`
 * (scripts/bundle-models.ts). Pass `--verbose` for their sizes.
 */
import { main as bundleModels } from './bundle-models';
import { main as bundleWebhook } from './bundle-webhook';

bundleWebhook();
bundleModels();
