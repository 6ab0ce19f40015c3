"""This repository's server on AWS Lambda: its HTTP API behind API Gateway, an ALB or a
function URL (`http.handler`), and the cleanups `serve` runs in its background as a
scheduled function (`schedule.handler`), both on DynamoDB, built from KEYGRAPH_* variables
(`environment`)."""
