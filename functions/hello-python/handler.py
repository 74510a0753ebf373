# A Kyma Function: the runtime calls main(event, context) for every HTTP request
# and sends what it returns as the response.
import os


def main(event, context):
    request = event["extensions"]["request"]
    name = request.query.get("name") or os.environ.get("GREETING_TARGET", "world")
    return {"message": f"Hello, {name}!"}
