// A Kyma Function: the runtime calls main(event, context) for every HTTP request
// and sends what it returns as the response. It loads this file with import(), which
// finds main only when it is assigned like this (not as a method inside an object literal).
module.exports.main = async function (event) {
  const name = event.extensions.request.query.name || process.env.GREETING_TARGET;
  // Publish an event for every greeting; hello-python subscribes to it (see its function.yaml).
  await event.emitCloudEvent('greeting.sent.v1', 'hello-node', { name });
  return { message: `Hello, ${name}!` };
};
