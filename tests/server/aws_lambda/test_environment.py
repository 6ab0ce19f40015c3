"""The settings a Lambda function runs with: DynamoDB in the function's region, GraphiQL
only when asked, and a clear refusal of what a function cannot run."""

from __future__ import annotations

import pytest

from server.aws_lambda.environment import lambda_settings
from server.settings import SettingsError

SECRET = "lambda-settings-secret-" + "s" * 32
DEPLOYED = {"KEYGRAPH_TABLE": "prod", "KEYGRAPH_JWT_SECRET": SECRET, "AWS_REGION": "eu-west-1"}


def test_dynamodb_in_the_functions_region_without_graphiql() -> None:
    settings = lambda_settings(DEPLOYED)
    assert (settings.store, settings.table, settings.region) == ("dynamodb", "prod", "eu-west-1")
    assert settings.env == "production"
    assert not settings.graphiql_enabled
    assert not lambda_settings(DEPLOYED | {"KEYGRAPH_ENV": "dev"}).graphiql_enabled
    assert lambda_settings(DEPLOYED | {"KEYGRAPH_GRAPHIQL": "1"}).graphiql_enabled
    assert lambda_settings(DEPLOYED | {"KEYGRAPH_REGION": "us-west-2"}).region == "us-west-2"
    assert lambda_settings(DEPLOYED | {"KEYGRAPH_STORE": "dynamodb"}).store == "dynamodb"


@pytest.mark.parametrize(
    ("variables", "message"),
    [
        ({"KEYGRAPH_STORE": "embedded"}, "on Lambda the store is DynamoDB, not 'embedded'"),
        ({"KEYGRAPH_STORE": "dynamodb-local"}, "the store is DynamoDB, not 'dynamodb-local'"),
        ({"KEYGRAPH_JWT_SECRET": ""}, "on Lambda set KEYGRAPH_JWT_SECRET"),
        ({"KEYGRAPH_METRICS_PORT": "9100"}, "KEYGRAPH_METRICS_PORT needs a long-lived process"),
    ],
)
def test_what_a_function_cannot_run_is_refused(variables: dict[str, str], message: str) -> None:
    with pytest.raises(SettingsError, match=message):
        lambda_settings(DEPLOYED | variables)
