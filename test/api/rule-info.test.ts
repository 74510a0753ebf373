import { APIRULE_RULES, FUNCTION_RULES, RuleInfo, SUBSCRIPTION_RULES, UpstreamEnforcement } from '../../src/api';

const TABLES: Array<[string, readonly RuleInfo[]]> = [['FUNCTION_RULES', FUNCTION_RULES], ['APIRULE_RULES', APIRULE_RULES], ['SUBSCRIPTION_RULES', SUBSCRIPTION_RULES]];

describe('the rules tables', () => {
  test.each(TABLES)('%s gives every rule a unique id, a field, a requirement, a hint and who enforces it upstream', (_name, table) => {
    expect(new Set(table.map(r => r.id)).size).toBe(table.length);
    for (const rule of table) {
      expect({ id: rule.id, field: rule.field.length > 0, requires: rule.requires.length > 0, hint: rule.hint.length > 0 })
        .toEqual({ id: rule.id, field: true, requires: true, hint: true });
      expect(Object.values(UpstreamEnforcement)).toContain(rule.upstream);
    }
  });

  test('names who enforces what: the API server for the schema, the controllers for their checks', () => {
    for (const [, table] of TABLES) {
      for (const rule of table.filter(r => r.id.startsWith('openapi.'))) expect({ id: rule.id, upstream: rule.upstream }).toEqual({ id: rule.id, upstream: UpstreamEnforcement.API_SERVER });
    }
    expect(new Set(APIRULE_RULES.map(r => r.upstream))).toEqual(new Set([UpstreamEnforcement.API_SERVER, UpstreamEnforcement.API_GATEWAY, UpstreamEnforcement.NOBODY]));
    expect(new Set(SUBSCRIPTION_RULES.map(r => r.upstream))).toEqual(new Set([UpstreamEnforcement.API_SERVER, UpstreamEnforcement.EVENTING_MANAGER, UpstreamEnforcement.NOBODY]));
  });
});
