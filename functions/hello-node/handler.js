// A Kyma Function: the runtime calls main(event, context) for every HTTP request
// and sends what it returns as the response.
module.exports = {
  main(event) {
    const name = event.extensions.request.query.name || process.env.GREETING_TARGET;
    return { message: `Hello, ${name}!` };
  },
};
