/**
 * What the webhook program's bundle holds in place of `@bufbuild/cel` (scripts/bundle-webhook.ts
 * aliases it here): the server evaluates no CEL, because the API server has evaluated the Function
 * CRD's rules on an object before it calls a validating webhook. The interpreter was half the
 * program's size. A call that reached it anyway says why, instead of answering wrongly.
 */
function noCel(): never {
  throw new Error('the webhook server evaluates no CEL: the API server has evaluated the CRD\'s rules before it calls the webhook');
}

export const celEnv = noCel;
export const plan = noCel;
export const parse = noCel;
export const strings = {};
