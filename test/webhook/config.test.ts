import { DEFAULT_FUNCTION_DEFAULTS, ServerlessRelease } from '../../src/api';
import { parseWebhookConfig, renderWebhookConfig, resolveWebhookConfig } from '../../src/webhook/config';

describe('the release of the webhook configuration', () => {
  test('is absent from a file that names none, which means 1.11.1, and stays absent when rendered', () => {
    const config = parseWebhookConfig('defaults: { replicas: 2 }');
    expect(config.release).toBeUndefined();
    expect(renderWebhookConfig(config)).not.toContain('release');
    expect(renderWebhookConfig(resolveWebhookConfig())).toBe(renderWebhookConfig(resolveWebhookConfig({})));
  });

  test('is read from the file and written back', () => {
    const config = parseWebhookConfig('release: 1.13.0');
    expect(config).toEqual({ ...resolveWebhookConfig(), release: ServerlessRelease.V1_13_0, defaults: DEFAULT_FUNCTION_DEFAULTS });
    expect(parseWebhookConfig(renderWebhookConfig(config))).toEqual(config);
  });

  test('fails when it is no release of this package, naming the ones it has', () => {
    expect(() => parseWebhookConfig('release: 1.12.0', 'config.yaml')).toThrow(/^config\.yaml is invalid:\n {2}release: must be one of 1\.11\.1, 1\.13\.0$/);
    expect(() => parseWebhookConfig('release: 1.13', 'config.yaml')).toThrow(/release: must be one of/);
  });
});
