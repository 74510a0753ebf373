# A Kyma Function: the runtime calls main(event, context) for every HTTP request, and for every
# event of its subscriptions (function.yaml), and sends what it returns as the response.
import os


def main(event, context):
    # event has no get(): event.ceHeaders is the dict behind event["..."].
    if event.ceHeaders.get("ce-type") == "greeting.sent.v1":
        print(f"hello-node greeted {event['data']['name']}", flush=True)
        return ""
    request = event["extensions"]["request"]
    name = request.query.get("name") or os.environ.get("GREETING_TARGET", "world")
    return {"message": f"Hello, {name}!"}
