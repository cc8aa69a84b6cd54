"""The table of credential shapes redaction knows, whoever the credential belongs to.

Each row names a credential, the literals one of which must occur for its pattern to run (most text
has none, and then no expression runs: redaction sees every byte of output), an RE2 pattern (linear
time, no lookaround) whose group `s` is the secret, and examples the tests hold it to: `examples`
must be redacted, `near_misses` (ordinary code and tool output that look alike) must not.

Patterns mark their left edge with `(?:^|[^…])` instead of a lookbehind; that character is outside
`s` and kept. `kind="pair"` rows match `name=value` spellings; their value is left alone when it is
code rather than a secret (`core.shape_redaction.looks_like_code`).
"""

from __future__ import annotations

from dataclasses import dataclass

# A token's left edge: not inside a longer word.
_EDGE = r"(?:^|[^A-Za-z0-9_])"
# A pair's value: quoted, or up to the next space, quote or delimiter.
_VALUE = r"""(?P<s>"[^"\n]{1,400}"|'[^'\n]{1,400}'|[^\s"'`,;&(){}\[\]<>|]{1,400})"""


@dataclass(frozen=True)
class Shape:
    name: str
    literals: tuple[str, ...]  # one must occur in the text (compared lower-cased when `fold`)
    pattern: str  # RE2; group `s` is what is redacted
    examples: tuple[str, ...]
    near_misses: tuple[str, ...] = ()
    fold: bool = False
    kind: str = "token"  # "pair": the value is kept when it is code (a name, a call, a placeholder)
    # How far a match crossing spaces runs past its literal: streamed text is held back that far.
    span: int = 0


SHAPES: tuple[Shape, ...] = (
    Shape(
        "npm token",
        ("npm_",),
        _EDGE + r"(?P<s>npm_[A-Za-z0-9]{36})",
        ("npm_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",),
        ("npm_config_cache=/tmp/x", "npm_package_version"),
    ),
    Shape(
        "npm auth line",
        ("_auth",),
        r"(?:^|[^A-Za-z0-9])(?:_authToken|_auth|_password)[ \t]*=[ \t]*" + _VALUE,
        ("//registry.npmjs.org/:_authToken=abcdef0123456789", '_auth = "dXNlcjpwYXNzd29yZA=="'),
        ("npm config get _authToken",),
        kind="pair",
        span=200,
    ),
    Shape(
        "PyPI token",
        ("pypi-",),
        _EDGE + r"(?P<s>pypi-Ag[A-Za-z0-9_-]{50,})",
        ("pypi-AgEIcHlwaS5vcmcCJDEyMzQ1Njc4LTEyMzQtMTIzNC0xMjM0LTEyMzQ1Njc4OTBhYgACKlszLCJhYmMiXQ",),
        ("pypi-simple index", "pypi-AgE"),
    ),
    Shape(
        "GitHub token",
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
        r"(?:^|[^A-Za-z0-9])(?P<s>gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})",
        (
            "ghp_" + "Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9St0Uv1Wx2Y",
            "ghs_" + "0123456789abcdefghijABCDEFGHIJklmnop",
            "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGH",
        ),
        ("gho_home = 1", "ghp_short"),
    ),
    Shape(
        "GitLab token",
        ("gl",),
        _EDGE + r"(?P<s>gl(?:pat|dt|rt|ptt|cbt|oas|ft|imt|soat|agent)-[A-Za-z0-9_-]{20,})",
        ("glpat-" + "xY9zAbCdEfGhIjKlMnOp", "glrt-" + "0123456789abcdefghijKL"),
        ("glpat-short", "global-flag"),
    ),
    Shape(
        "Slack token",
        ("xox", "xapp-"),
        _EDGE + r"(?P<s>xox[abposr]-[A-Za-z0-9-]{10,}|xapp-[0-9]-[A-Za-z0-9-]{10,})",
        ("xoxb-" + "1234567890-0987654321-AbCdEfGhIjKl", "xoxp-" + "12345-67890-abcdef"),
        ("xox-ref",),
    ),
    Shape(
        "Slack or Discord webhook",
        ("hooks.slack.com", "/api/webhooks/"),
        r"(?:hooks\.slack\.com/(?:services|workflows|triggers)/|discord(?:app)?\.com/api/webhooks/[0-9]+/)"
        r"(?P<s>[A-Za-z0-9/_-]{8,})",
        (
            "https://hooks.slack.com/services/" + "T000/B000/XXXXXXXXXXXXXXXX",
            "https://discord.com/api/webhooks/123456/" + "abcDEF-ghi_jklMNO",
        ),
        ("https://hooks.slack.com/",),
    ),
    Shape(
        "Stripe key",
        ("_live_", "_test_", "whsec_"),
        _EDGE + r"(?P<s>(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}|whsec_[A-Za-z0-9]{24,})",
        ("sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc", "rk_live_" + "51H8aBcDeFgHiJkLmN0pQ"),
        ("sk_test == 0x736b", "is_live_test_mode"),
    ),
    Shape(
        "Google API key or OAuth token",
        ("AIza", "ya29.", "GOCSPX-", "1//0"),
        _EDGE + r"(?P<s>AIza[0-9A-Za-z_-]{35}|ya29\.[0-9A-Za-z_-]{20,}|GOCSPX-[0-9A-Za-z_-]{20,}"
        r"|1//0[0-9A-Za-z_-]{30,})",
        (
            "AIza" + "SyD-1234567890abcdefghijklmnopqrstu",
            "ya29." + "a0AfH6SMBx1234567890abcdefg",
            "GOCSPX-" + "abcdefghijklmnop123456789",
        ),
        ("AIzaShort",),
    ),
    Shape(
        "Azure key or signature",
        ("accountkey", "sharedaccesskey", "sig="),
        r"(?i)(?:^|[^A-Za-z0-9])(?:AccountKey|SharedAccessKey|sig)=(?P<s>[A-Za-z0-9+/%=]{16,})",
        (
            "DefaultEndpointsProtocol=https;AccountName=x;AccountKey="
            + "q8Jd9f0a1B2c3D4e5F6g7H8i9J0kLmNoPq==;",
            "https://acct.blob.core.windows.net/c/b?sv=2022-11-02&sig=" + "AbCdEfGhIjKlMnOpQrStUv%3D",
        ),
        ("sig=short", "config=AccountKey"),
        fold=True,
    ),
    Shape(
        "AWS access key id",
        ("AKIA", "ASIA", "ABIA", "ACCA"),
        r"(?:^|[^A-Z0-9])(?P<s>(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16})",
        ("AKIA" + "IOSFODNN7EXAMPLE", "ASIA" + "ABCDEFGHIJKLMNOP"),
        ("AKIAFOO", "ASIAN_MARKETS"),
    ),
    Shape(
        "AWS secret or session key",
        ("secret_access_key", "secretaccesskey", "session_token", "sessiontoken"),
        r"(?i)(?:secret_?access_?key|session_?token)[\"']?[ \t]*[:=][ \t]*[\"']?(?P<s>[A-Za-z0-9/+=]{16,})",
        (
            "aws_secret_access_key = " + "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            '"SecretAccessKey": "' + 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"',
        ),
        ("aws_secret_access_key = None",),
        fold=True,
        span=200,
    ),
    Shape(
        "JSON web token",
        ("eyJ",),
        _EDGE + r"(?P<s>eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*)",
        (
            "eyJhbGciOiJIUzI1NiJ9."
            + "eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
        ),
        ("eyJhbGciOiJIUzI1NiJ9 alone",),
    ),
    Shape(
        "private key block",
        ("-----BEGIN",),
        r"(?P<s>-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----(?s:.*?)"
        r"(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\z))",
        (
            "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----",
            '"private_key": "-----BEGIN PRIVATE KEY-----\\nMIIEvQIBADANBg\\n-----END PRIVATE KEY-----\\n"',
            "-----BEGIN PGP PRIVATE KEY BLOCK-----\nlQOYBF0\n",
        ),
        ("-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZI\n-----END PUBLIC KEY-----", "grep 'PRIVATE KEY' -r ."),
        span=8000,
    ),
    Shape(
        "password pair",
        ("pass", "pwd"),
        r"(?i)(?:^|[^A-Za-z0-9])[A-Za-z0-9_.-]*(?:password|passwd|passphrase|pwd)[A-Za-z0-9_]*[\"']?"
        r"[ \t]*(?::=|=>|[:=])[ \t]*" + _VALUE,
        (
            "password=hunter2",
            "PGPASSWORD=s3cr3t psql",
            'db_password: "hunter2"',
            '{"passwd": "x7!kL"}',
            "MYSQL_PWD=abc123 mysql",
            "--password=hunter2",
            "pwd = 'a b c'",
        ),
        (
            "password = os.environ['DB_PASSWORD']",
            "def login(password: str) -> None:",
            "password=password",
            "password=None",
            "password: Optional[str] = None",
            'password = getpass("Password: ")',
            "PWD=/home/user",
            "password=${DB_PASSWORD}",
            "password = self.password",
            "password: <your password>",
            "pwd()",
            "password_file=/run/secrets/db",
        ),
        fold=True,
        kind="pair",
        span=200,
    ),
    Shape(
        "password flag",
        ("--pass",),
        r"(?i)(?:^|\s)--pass(?:word)?\s+(?P<s>[^\s-][^\s]{0,400})",
        ("mysql --password hunter2 -h db", "tool --pass 's3cret'"),
        ("--password-file /run/secret", "--password $PW"),
        fold=True,
        kind="pair",
        span=200,
    ),
    Shape(
        "netrc password",
        ("machine",),
        r"""(?i)\bmachine\s+\S+\s+login\s+\S+\s+password\s+(?P<s>[^\s"'`]+)""",
        ("machine github.com login bob password ghx0123456789",),
        ("the machine login screen",),
        fold=True,
        span=200,
    ),
    Shape(
        "netrc password line",
        ("password",),
        # the line may carry the number a file viewer puts before it (`     3\t  password …`)
        r"""(?im)^[ \t]*(?:[0-9]+[ \t:|]+)?password[ \t]+(?P<s>[^\s"'`]+)[ \t]*$""",
        ("machine api.example.com\n  login bob\n  password 0123-abcd-4567",),
        ("    password\n", "password: str"),
        fold=True,
        kind="pair",
        span=200,
    ),
    Shape(
        "Docker registry auth",
        ('"auth"',),
        r'"auth"[ \t]*:[ \t]*"(?P<s>[A-Za-z0-9+/=]{8,})"',
        ('{"auths": {"registry.corp.example": {"auth": "ZGVwbG95OmRvY2tlci1wYXNz"}}}',),
        ('{"auth": "none"}', '"auth": true'),
        span=200,
    ),
    Shape(
        "pgpass line",
        (":",),
        # host (a name, not a number), port (2 to 5 digits: not a user id), database, user (a name,
        # not the `x` of /etc/passwd, which reversed looks like this), password (3 characters or
        # more, not a path; `\:` escapes a colon, and a bare one means more fields: a MAC or IPv6
        # address)
        r"(?m)(?:^|[^A-Za-z0-9._*-])(?:\*|[A-Za-z0-9_-]*[A-Za-z.][A-Za-z0-9._-]*):(?:[0-9]{2,5}|\*):[^:\s]+:"
        r"(?:\*|[A-Za-wyz]|[^:\s]*[A-Za-z][^:\s]+|[^:\s]+[A-Za-z]):"
        r"""(?P<s>(?:[^\s"'`/:\\]|\\.)(?:[^\s"'`:\\]|\\.){2,})(?:[\s"'`]|$)""",
        ("db.example.com:5432:app:bob:hunter2", "*:*:*:postgres:pw-local-1", "db:5432:app:bob:a\\:b"),
        (
            "root:x:0:0:root:/root:/bin/bash",
            "hsab/nib/:toor/:toor:0:0:x:toor",
            "nigolon/nibs/rsu/:www/rav/:atad-www:33:33:x:atad-www",
            "https://example.com:443/a:b:c",
            "10:30:00:12:5",
            "fe80::1ff:fe23:4567:890a",
            "aa:bb:cc:dd:ee:ff",
            "link/ether 5a:64:d9:c8:c6:a2 brd ff:ff:ff:ff:ff:ff",
            "link/ether 02:fc:00:00:00:01 brd ff:ff:ff:ff:ff:ff",
            "00:ab:12:cd:ef:34",
            "fe80:0:0:0:1ff:fe23:4567:890a",
        ),
    ),
    Shape(
        "credential assignment",
        ("token", "secret", "api_key", "apikey", "access_key"),
        r"(?i)(?:^|[^A-Za-z0-9])[A-Za-z0-9_.-]*(?:token|secret|api_?key|access_?key)[\"']?[ \t]*(?::=|=>|[:=])[ \t]*"
        r"(?P<s>\"[^\"\s]{12,400}\"|'[^'\s]{12,400}'|[A-Za-z0-9+/=_.~-]{16,400})",
        (
            'token = "cio0123456789abcdefABCDEF0123456789"',
            "export OPENAI_API_KEY=abcdefghijklmnop1234",
            '"refresh_token": "0.AXkAabcdefghijklmnop"',
            "VAULT_TOKEN=hvs-0123456789abcdefghij",
        ),
        (
            "tokens = tokenizer.tokenize(text)",
            'token = "("',
            "secret_name = secret_manager_default_name",
            "max_tokens = 4096",
        ),
        fold=True,
        kind="pair",
        span=200,
    ),
    Shape(
        "URL credentials",
        ("://",),
        r"[A-Za-z][A-Za-z0-9+.-]*://[^\s:/@]*:(?P<s>[^\s@/]+)@",
        (
            "postgres://bob:hunter22@db/x",
            "https://x-access-token:abc123@github.com/o/r.git",
            "redis://:pw0rd@cache:6379",
        ),
        ("https://example.com:8443/path", "git@github.com:owner/repo.git", "http://[::1]:8080/x@y"),
    ),
    Shape(
        "bearer or basic authorization",
        ("bearer", "authorization"),
        r"(?i)(?:bearer|authorization:\s*basic)\s+(?P<s>[A-Za-z0-9._~+/=-]{8,})",
        ("Authorization: Bearer abcdefghijk", "authorization: Basic dXNlcjpwYXNzd29yZA=="),
        ("a bearer of bad news",),
        fold=True,
        span=200,
    ),
    Shape(
        "API key with a vendor prefix",
        ("sk-", "hf_", "dckr_pat_", "SG.", "cio"),
        r"(?:^|[^A-Za-z0-9_-])(?P<s>sk-[A-Za-z0-9_-]{20,}|hf_[A-Za-z0-9]{30,}|dckr_pat_[A-Za-z0-9_-]{20,}"
        r"|SG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}|cio[A-Za-z0-9]{32})",
        (
            "sk-" + "proj-0123456789abcdefghijkl",
            "hf_" + "abcdefghijklmnopqrstuvwxyz0123456789",
            "cio" + "0123456789abcdefABCDEF0123456789",
        ),
        ("risk-assessment-of-the-current-plan", "hf_hub_download"),
    ),
    Shape(
        "Vault token",
        ("hvs.", "hvb.", "hvr."),
        _EDGE + r"(?P<s>hv[sbr]\.[A-Za-z0-9_-]{20,})",
        ("hvs." + "CAESIJ0123456789abcdefghijklmnop",),
        ("hvs.short",),
    ),
)
