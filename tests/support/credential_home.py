"""A home folder of real-looking credential files of many tools, and the credentials in each: what
the redaction tests print through every spelling and replay through the agent loop."""

from __future__ import annotations

import base64

# (file, its text, the credentials in it)
CREDENTIAL_FILES = [
    (
        ".npmrc",
        "registry=https://registry.npmjs.org/\n//registry.npmjs.org/:_authToken=npm_Q3xv9LmT0aBcDeFgHiJkLmNoPqRsTuVwXyZ1\n",
        ["npm_Q3xv9LmT0aBcDeFgHiJkLmNoPqRsTuVwXyZ1"],
    ),
    (
        ".npmrc (legacy)",
        "//npm.corp.example/:_auth=Ym9iOnMzY3JldC1ucG0tcGFzcw==\nemail=bob@example.com\n",
        ["Ym9iOnMzY3JldC1ucG0tcGFzcw=="],
    ),
    (
        ".pypirc",
        "[distutils]\nindex-servers = pypi\n\n[pypi]\nusername = __token__\npassword = "
        "pypi-AgEIcHlwaS5vcmcCJGQ4ZTFmYjQyLTk3YjMtNGE2Zi1hZGQ0LTdkMmM5ZjE0YjJkNQACKlszLCJhYmMiXQAABiD\n",
        ["pypi-AgEIcHlwaS5vcmcCJGQ4ZTFmYjQyLTk3YjMtNGE2Zi1hZGQ0LTdkMmM5ZjE0YjJkNQACKlszLCJhYmMiXQAABiD"],
    ),
    (
        ".config/gcloud/application_default_credentials.json",
        '{\n  "client_id": "764086051850-6qr4p6gpi6hn506pt8ejuq83di341hur.apps.googleusercontent.com",\n'
        '  "client_secret": "d-FL95Q19q7MQmFpd7hHD0Ty",\n'
        '  "refresh_token": "1//0gLx3kQ9vT2mWCgYIARAAGBASNwF-L9IrJ4sV8nXqZ0pUe7yH3bK5aD1cF6gR",\n'
        '  "type": "authorized_user"\n}\n',
        ["d-FL95Q19q7MQmFpd7hHD0Ty", "1//0gLx3kQ9vT2mWCgYIARAAGBASNwF-L9IrJ4sV8nXqZ0pUe7yH3bK5aD1cF6gR"],
    ),
    (
        ".config/gcloud/legacy_credentials/bob/adc.json (service account)",
        '{"type": "service_account", "project_id": "demo", "private_key_id": "3f1c",\n'
        ' "private_key": "-----BEGIN PRIVATE KEY-----\\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7\\n'
        'q8Jd9f0a1B2c3D4e5F6g7H8i9J0kLmNoPq\\n-----END PRIVATE KEY-----\\n",\n'
        ' "client_email": "bot@demo.iam.gserviceaccount.com"}\n',
        ["MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7", "q8Jd9f0a1B2c3D4e5F6g7H8i9J0kLmNoPq"],
    ),
    (
        ".azure/msal_token_cache.json",
        '{"AccessToken": {"x": {"secret": "eyJ0eXAiOiJKV1QiLCJhbGciOiJSUzI1NiJ9.eyJhdWQiOiJodHRwczovL21hbmFnZW1lbnQifQ.'
        'c2lnbmF0dXJlLXBhcnQtb2YtdGhlLXRva2Vu"}},\n "RefreshToken": {"y": {"secret": '
        '"0.AXkAv3rYl0ngR3fr3shT0k3nV4lu3-W1thD0tsAndDash3s_AndUnd3rsc0r3s"}}}\n',
        [
            "eyJ0eXAiOiJKV1QiLCJhbGciOiJSUzI1NiJ9.eyJhdWQiOiJodHRwczovL21hbmFnZW1lbnQifQ.c2lnbmF0dXJlLXBhcnQtb2YtdGhlLXRva2Vu",
            "0.AXkAv3rYl0ngR3fr3shT0k3nV4lu3-W1thD0tsAndDash3s_AndUnd3rsc0r3s",
        ],
    ),
    (
        ".cargo/credentials.toml",
        '[registry]\ntoken = "cioAbCdEfGhIjKlMnOpQrStUvWxYz0123456"\n',
        ["cioAbCdEfGhIjKlMnOpQrStUvWxYz0123456"],
    ),
    (
        ".vault-token",
        "hvs.CAESIGx4bW9ja3ZhdWx0dG9rZW5mb3J0ZXN0aW5nMTIzNDU2\n",
        ["hvs.CAESIGx4bW9ja3ZhdWx0dG9rZW5mb3J0ZXN0aW5nMTIzNDU2"],
    ),
    (
        ".pgpass",
        "db.prod.example:5432:app:deploy:Pg-Pr0d-S3cret!\n*:*:*:postgres:local-admin-pw-77\n",
        ["Pg-Pr0d-S3cret!", "local-admin-pw-77"],
    ),
    (
        ".bash_history",
        "ls\nexport GITHUB_TOKEN=ghp_R8aZ2mK9xQ4vB7nL1pT6wE3yU0iO5sDfGhJk\n"
        "mysql -u root --password=My-Sql-R00t-Pw db\ncurl -H 'Authorization: Bearer tok_8f7a6b5c4d3e2f1a0b9c' api\n"
        "PGPASSWORD=hunter2-prod psql -h db\nexport STRIPE_KEY=sk_live_51HxYzAbCdEfGhIjKlMnOpQr\n",
        [
            "ghp_R8aZ2mK9xQ4vB7nL1pT6wE3yU0iO5sDfGhJk",
            "My-Sql-R00t-Pw",
            "tok_8f7a6b5c4d3e2f1a0b9c",
            "hunter2-prod",
            "sk_live_51HxYzAbCdEfGhIjKlMnOpQr",
        ],
    ),
    (
        ".git-credentials",
        "https://bob:gho_T0k3nF0rG1tHubCl0n3sXyZ0123456789ab@github.com\n"
        "https://oauth2:glpat-Zx8Yw7Vu6Ts5Rq4Po3Nm@gitlab.com\n",
        ["gho_T0k3nF0rG1tHubCl0n3sXyZ0123456789ab", "glpat-Zx8Yw7Vu6Ts5Rq4Po3Nm"],
    ),
    (
        ".config/git/credentials",
        "https://deploy:plain-git-password-42@git.corp.example\n",
        ["plain-git-password-42"],
    ),
    (
        ".docker/config.json",
        '{"auths": {"registry.corp.example": {"auth": "ZGVwbG95OmRvY2tlci1wYXNzd29yZC05OQ=="}}}\n',
        ["ZGVwbG95OmRvY2tlci1wYXNzd29yZC05OQ=="],
    ),
    (
        ".kube/config",
        "users:\n- name: admin\n  user:\n    client-key-data: "
        + base64.b64encode(
            b"-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEAzK8s9dF3kL2mN\n-----END RSA PRIVATE KEY-----\n"
        ).decode()
        + "\n    token: eyJhbGciOiJSUzI1NiIsImtpZCI6IjEifQ.eyJzdWIiOiJzeXN0ZW06YWRtaW4ifQ.S1gN4tUr3\n",
        [
            "MIIEpAIBAAKCAQEAzK8s9dF3kL2mN",
            "eyJhbGciOiJSUzI1NiIsImtpZCI6IjEifQ.eyJzdWIiOiJzeXN0ZW06YWRtaW4ifQ.S1gN4tUr3",
        ],
    ),
    (
        ".netrc",
        "machine api.heroku.com\n  login bob@example.com\n  password 01234567-heroku-api-key-89abcdef\n",
        ["01234567-heroku-api-key-89abcdef"],
    ),
    (
        ".config/other-agent/auth.json",
        '{"tokens": {"access_token": "oat01-AbCdEfGhIjKlMnOpQrStUvWx", '
        '"refresh_token": "ort01-ZyXwVuTsRqPoNmLkJiHgFeDc"}, "OPENAI_API_KEY": "sk-proj-Zz9Yy8Xx7Ww6Vv5Uu4Tt3Ss2"}\n',
        [
            "oat01-AbCdEfGhIjKlMnOpQrStUvWx",
            "ort01-ZyXwVuTsRqPoNmLkJiHgFeDc",
            "sk-proj-Zz9Yy8Xx7Ww6Vv5Uu4Tt3Ss2",
        ],
    ),
    (
        "../other/.env",
        "DATABASE_URL=postgres://app:Env-Db-Pw-314@db:5432/app\nSLACK_WEBHOOK="
        "https://hooks.slack.com/services/T0ABC/B0DEF/xYzAbC123dEf456gHi789\nAWS_ACCESS_KEY_ID=AKIAQ3EGRXAMPLE7KEY2\n"
        "AWS_SECRET_ACCESS_KEY=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\nAZURE_STORAGE_CONNECTION_STRING=DefaultEndpointsProtocol"
        "=https;AccountName=acct;AccountKey=bXlzdG9yYWdlYWNjb3VudGtleWJhc2U2NA==;EndpointSuffix=core.windows.net\n",
        [
            "Env-Db-Pw-314",
            "T0ABC/B0DEF/xYzAbC123dEf456gHi789",
            "AKIAQ3EGRXAMPLE7KEY2",
            "Zm9vYmFyYmF6cXV4cXV1eGNvcmdlZ3JhdWx0Z2Fy",
            "bXlzdG9yYWdlYWNjb3VudGtleWJhc2U2NA==",
        ],
    ),
    (
        "ps -eo args",
        "/usr/bin/python3 worker.py --password=Ps-Args-Pw-2718 --verbose\n"
        "mysqldump --user=root --password Dump-Pw-1618 shop\n/opt/app/bin/server --token=tk_live_9Z8Y7X6W5V4U3T2S\n",
        ["Ps-Args-Pw-2718", "Dump-Pw-1618", "tk_live_9Z8Y7X6W5V4U3T2S"],
    ),
]
