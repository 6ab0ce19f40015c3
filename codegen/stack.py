"""The whole stack of a served API as one AWS SAM template (stack.json): the table, the
function answering GraphQL behind an HTTP API and, where deletes leave owned items to
remove, the function sweeping them each minute; their log groups with a retention, alarms
on their errors and throttles and on the table's, and their role's least privilege
(iam.py)."""

from __future__ import annotations

from typing import Any

from .spec import TableSpec
from .tabledef import HEADER, cloudformation

HANDLER = "keygraph.serve.lambda_handler.handler"
SWEEP_HANDLER = "keygraph.serve.lambda_handler.sweep"
SWEEP_SCHEDULE = "rate(1 minute)"
RUNTIME = "python3.12"
LOG_RETENTION_DAYS = 30
TABLE_SKIPPED = {
    "CKV_AWS_119": "encrypted at rest with an AWS owned key: a customer managed one costs a "
    "month's fee and its calls, against a stack that costs nothing idle",
}
NO_PITR = {
    "CKV_AWS_28": "the spec leaves point-in-time recovery off ([table] point_in_time_recovery)",
}
LOGS_SKIPPED = {
    "CKV_AWS_158": "CloudWatch Logs encrypts at rest; a customer managed key costs a month's fee",
}
SKIPPED = {
    "CKV_AWS_115": "concurrency is the account's; set ReservedConcurrentExecutions per stage",
    "CKV_AWS_116": "an HTTP API invokes it synchronously: a failure is the client's answer",
    "CKV_AWS_117": "it reaches only DynamoDB, over AWS's endpoint: no VPC to join",
    "CKV_AWS_173": "Lambda encrypts its environment at rest with an AWS managed key",
}
"""checkov's checks the function leaves, each with why (the table's and logs' above)."""
SWEEPER_SKIPPED = SKIPPED | {
    "CKV_AWS_116": "a schedule invokes it: a failed sweep is done again by the next, a minute on",
}


def stack(
    table: TableSpec, source: str, policy: list[dict[str, Any]], package: str, sweeps: bool
) -> dict[str, Any]:
    """The template serving generated package `package` (its import name); with its
    sweeper when `sweeps`."""
    resources = cloudformation(table, source)["Resources"]
    resources["Table"] |= {
        "DeletionPolicy": "Retain",
        "UpdateReplacePolicy": "Retain",
        "Metadata": _skips(TABLE_SKIPPED | ({} if table.point_in_time_recovery else NO_PITR)),
    }
    routes = {"Post": _route("POST"), "Get": _route("GET")}
    resources |= _function("Function", HANDLER, 10, routes, SKIPPED, policy, package)
    if sweeps:
        every = {"Every": {"Type": "Schedule", "Properties": {"Schedule": SWEEP_SCHEDULE}}}
        resources |= _function(
            "Sweeper", SWEEP_HANDLER, 60, every, SWEEPER_SKIPPED, policy, package
        )
    resources["TableThrottles"] = _alarm("AWS/DynamoDB", "ThrottledRequests", "TableName", "Table")
    return {
        "AWSTemplateFormatVersion": "2010-09-09",
        "Transform": "AWS::Serverless-2016-10-31",
        "Description": f"{HEADER} source: {source}",
        "Parameters": {
            "JwtSecret": {
                "Type": "String",
                "NoEcho": True,
                "MinLength": 32,
                "Description": "The secret bearer tokens are signed with (KEYGRAPH_JWT_SECRET).",
            }
        },
        "Resources": resources,
        "Outputs": {
            "GraphqlUrl": {
                "Description": "Where the API answers.",
                "Value": {
                    "Fn::Sub": "https://${ServerlessHttpApi}.execute-api.${AWS::Region}"
                    ".${AWS::URLSuffix}/graphql"
                },
            }
        },
    }


def _skips(checks: dict[str, str]) -> dict[str, Any]:
    return {"checkov": {"skip": [{"id": k, "comment": why} for k, why in checks.items()]}}


def _route(method: str) -> dict[str, Any]:
    return {"Type": "HttpApi", "Properties": {"Path": "/graphql", "Method": method}}


def _function(
    name: str,
    handler: str,
    timeout: int,
    events: dict[str, Any],
    skipped: dict[str, str],
    policy: list[dict[str, Any]],
    package: str,
) -> dict[str, Any]:
    """A function of the package, its log group and its alarms, by their names."""
    function = {
        "Type": "AWS::Serverless::Function",
        "Metadata": _skips(skipped),
        "Properties": {
            "Handler": handler,
            "Runtime": RUNTIME,
            "CodeUri": "..",
            "Architectures": ["arm64"],
            "MemorySize": 512,
            "Timeout": timeout,
            "Tracing": "Active",
            "Environment": {
                "Variables": {
                    "KEYGRAPH_PACKAGE": package,
                    "KEYGRAPH_TABLE_NAME": {"Ref": "Table"},
                    "KEYGRAPH_JWT_SECRET": {"Ref": "JwtSecret"},
                }
            },
            "Policies": [{"Version": "2012-10-17", "Statement": policy}],
            "Events": events,
        },
    }
    logs = {
        "Type": "AWS::Logs::LogGroup",
        "Metadata": _skips(LOGS_SKIPPED),
        "Properties": {
            "LogGroupName": {"Fn::Sub": f"/aws/lambda/${{{name}}}"},
            "RetentionInDays": LOG_RETENTION_DAYS,
        },
    }
    return {
        name: function,
        f"{name}Logs": logs,
        f"{name}Errors": _alarm("AWS/Lambda", "Errors", "FunctionName", name),
        f"{name}Throttles": _alarm("AWS/Lambda", "Throttles", "FunctionName", name),
    }


def _alarm(namespace: str, metric: str, dimension: str, resource: str) -> dict[str, Any]:
    return {
        "Type": "AWS::CloudWatch::Alarm",
        "Properties": {
            "AlarmDescription": f"{metric} of the {resource.lower()} in the last 5 minutes.",
            "Namespace": namespace,
            "MetricName": metric,
            "Dimensions": [{"Name": dimension, "Value": {"Ref": resource}}],
            "Statistic": "Sum",
            "Period": 300,
            "EvaluationPeriods": 1,
            "Threshold": 1,
            "ComparisonOperator": "GreaterThanOrEqualToThreshold",
            "TreatMissingData": "notBreaching",
        },
    }
