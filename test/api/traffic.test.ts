import * as fc from 'fast-check';
import { SERVICE_NAME_MAX_LENGTH, taggedServiceName, trafficRouteProblems } from '../../src/api/traffic';

describe('traffic routes', () => {
  test.each([
    ['one route with everything', [{ percent: 100 }]],
    ['a canary', [{ percent: 90 }, { percent: 10, tag: 'canary' }]],
    ['a blue/green step with the new version at 0 %', [{ percent: 100, tag: 'blue' }, { percent: 0, tag: 'green' }]],
    ['three thirds', [{ percent: 33 }, { percent: 33 }, { percent: 34 }]],
  ])('accepts %s', (_what, routes) => {
    expect(trafficRouteProblems(routes, 'orders')).toEqual([]);
  });

  test('fails when there is no route', () => {
    expect(trafficRouteProblems([])).toEqual(['a traffic split needs at least one route']);
  });

  test('fails when the percents add up to less than 100', () => {
    expect(trafficRouteProblems([{ percent: 80 }, { percent: 10 }])).toEqual([
      'the percents of the routes add up to 90; they must add up to exactly 100 (80 + 10)',
    ]);
  });

  test('fails when the percents add up to more than 100', () => {
    expect(trafficRouteProblems([{ percent: 100 }, { percent: 1 }])).toEqual([
      'the percents of the routes add up to 101; they must add up to exactly 100 (100 + 1)',
    ]);
  });

  test.each([-1, 101, 50.5, NaN, Infinity])('fails when a percent is %p, and leaves the sum alone', percent => {
    expect(trafficRouteProblems([{ percent: 50 }, { percent }])).toEqual([`routes[1].percent (${percent}) must be a whole number from 0 to 100`]);
  });

  test.each(['Canary', '1st', 'can_ary', 'canary-', 'a.b', ''])('fails when a tag is %p', tag => {
    expect(trafficRouteProblems([{ percent: 100, tag }])).toEqual([
      `routes[0].tag (${JSON.stringify(tag)}) must be a DNS-1035 label: at most 63 lower-case letters, digits and '-', starting with a letter and ending with a letter or digit`,
    ]);
  });

  test('fails when two routes share a tag', () => {
    expect(trafficRouteProblems([{ percent: 50, tag: 'v2' }, { percent: 50, tag: 'v2' }])).toEqual([
      'routes[1].tag ("v2") is already the tag of routes[0]; each tag names one route',
    ]);
  });

  test('fails when <tag>-<name> is longer than a Service name may be', () => {
    const name = 'n'.repeat(60);
    expect(trafficRouteProblems([{ percent: 100, tag: 'abc' }], name)).toEqual([
      `routes[0].tag ("abc") makes the Service name "abc-${name}" 64 characters long; at most 63 are allowed, so shorten the tag to 2 characters or fewer`,
    ]);
    expect(trafficRouteProblems([{ percent: 100, tag: 'ab' }], name)).toEqual([]);
  });

  test('names the Service of a tag <tag>-<name>', () => {
    expect(taggedServiceName('canary', 'orders')).toBe('canary-orders');
  });

  test('accepts any split of 100 into whole percents, and rejects any other total', () => {
    const split = fc.array(fc.integer({ min: 0, max: 100 }), { minLength: 1, maxLength: 6 });
    fc.assert(fc.property(split, percents => {
      const total = percents.reduce((a, b) => a + b, 0);
      const problems = trafficRouteProblems(percents.map(percent => ({ percent })));
      return total === 100 ? problems.length === 0 : problems.length === 1 && problems[0].startsWith(`the percents of the routes add up to ${total};`);
    }));
  });

  test('accepts every tag whose Service name fits', () => {
    const label = fc.stringMatching(/^[a-z]([-a-z0-9]{0,40}[a-z0-9])?$/);
    fc.assert(fc.property(label, label, (tag, name) => {
      const fits = taggedServiceName(tag, name).length <= SERVICE_NAME_MAX_LENGTH;
      return (trafficRouteProblems([{ percent: 100, tag }], name).length === 0) === fits;
    }));
  });
});
