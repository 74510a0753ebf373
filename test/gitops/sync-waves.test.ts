import * as fc from 'fast-check';
import { FUNCTION_API_VERSION, FUNCTION_KIND } from '../../src/api/function-schema';
import { SyncWave, reachesFunctions, syncWaveOf } from '../../src/gitops/sync-waves';

/** The group and kind as sync-waves.ts wrote them before it remembered them. */
const groupKind = (o: { apiVersion: string; kind: string }) => `${o.apiVersion.includes('/') ? o.apiVersion.split('/')[0] : ''}/${o.kind}`;
const ROUTES = ['gateway.kyma-project.io/APIRule', 'networking.istio.io/VirtualService', 'gateway.networking.k8s.io/HTTPRoute', 'eventing.kyma-project.io/Subscription'];
const SCALERS = ['keda.sh/ScaledObject', 'autoscaling/HorizontalPodAutoscaler'];
const FOUNDATION = ['CustomResourceDefinition', 'Namespace', 'PriorityClass'];

function expectedWave(o: { apiVersion: string; kind: string }): SyncWave {
  if (FOUNDATION.includes(o.kind)) return SyncWave.FOUNDATION;
  if ((o.apiVersion === FUNCTION_API_VERSION && o.kind === FUNCTION_KIND) || ROUTES.includes(groupKind(o))) return SyncWave.FUNCTIONS;
  if (SCALERS.includes(groupKind(o))) return SyncWave.ROUTES;
  return SyncWave.SYSTEM;
}

const typed = fc.oneof(
  fc.constantFrom(...[...ROUTES, ...SCALERS, '/Deployment', 'apps/Deployment', 'keda.sh/TriggerAuthentication'].map(gk => {
    const [group, kind] = gk.split('/');
    return { apiVersion: group ? `${group}/v1` : 'v1', kind };
  }), { apiVersion: FUNCTION_API_VERSION, kind: FUNCTION_KIND }, { apiVersion: 'v1', kind: 'Namespace' }),
  fc.record({
    apiVersion: fc.oneof(fc.constantFrom('v1', 'apps/v1', 'keda.sh/v1alpha1', 'a/b/c', '/v1', 'autoscaling/'), fc.string({ maxLength: 6 })),
    kind: fc.oneof(fc.constantFrom('ScaledObject', 'HorizontalPodAutoscaler', 'APIRule', 'Namespace', '', '__proto__'), fc.string({ maxLength: 6 })),
  }),
);

test('the wave and the reach of an object are those of its group and kind, however often they are asked', () => {
  fc.assert(fc.property(fc.array(typed, { maxLength: 20 }), objects => {
    for (const o of [...objects, ...objects]) {
      expect(syncWaveOf(o)).toBe(expectedWave(o));
      expect(reachesFunctions(o)).toBe(ROUTES.includes(groupKind(o)) || SCALERS.includes(groupKind(o)));
    }
  }), { numRuns: 300 });
});
