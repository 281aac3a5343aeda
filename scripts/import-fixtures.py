"""Writes Tests/LedgerTestSupport/Resources/imports/: export files as Firebase, Auth0 and the
ledger's JSON lines carry them, with password hashes made by the libraries those systems use
(PyPI's firebase-scrypt, bcrypt, argon2-cffi, Django's hashers, passlib, and Python's hashlib for
the PHC PBKDF2 form Auth0 exports), and passwords.json naming each record's password for the
tests. Cheap costs, so the tests run fast. Run with the venv of scripts/foreign-hash-fixtures.py:
    /tmp/hashes/bin/python scripts/import-fixtures.py
"""
import base64
import hashlib
import json
import os

import argon2
import bcrypt
import firebase_scrypt
from django.conf import settings

settings.configure(PASSWORD_HASHERS=[])
from django.contrib.auth.hashers import PBKDF2PasswordHasher  # noqa: E402
from passlib.hash import scrypt  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "Tests", "LedgerTestSupport", "Resources", "imports")
os.makedirs(OUT, exist_ok=True)
passwords = {}


def b64(data):
    return base64.b64encode(data).decode()


def write(name, value, lines=False):
    with open(os.path.join(OUT, name), "w", encoding="utf-8") as handle:
        if lines:
            handle.writelines(line + "\n" for line in value)
        else:
            json.dump(value, handle, indent=1, ensure_ascii=False)
            handle.write("\n")


# Firebase: the project's hash config (as the console shows it) and auth:export's users.
signer_key, separator = os.urandom(64), b"\x07"
config = {"algorithm": "SCRYPT", "base64_signer_key": b64(signer_key), "base64_salt_separator": b64(separator),
          "rounds": 8, "mem_cost": 10}
write("firebase-hash-config.json", config)
with open(os.path.join(OUT, "firebase-hash-config.txt"), "w", encoding="utf-8") as handle:
    handle.write("hash_config {\n  algorithm: SCRYPT,\n  base64_signer_key: %s,\n  base64_salt_separator: %s,\n"
                 "  rounds: 8,\n  mem_cost: 10,\n}\n" % (config["base64_signer_key"], config["base64_salt_separator"]))


def firebase_hash(password):
    salt = os.urandom(12)
    derived = firebase_scrypt.generate_derived_key(password, salt, separator, 8, 10)
    hashed = b64(firebase_scrypt.encrypt(signer_key, derived))
    assert firebase_scrypt.verify_password(password, hashed, b64(salt), b64(separator), b64(signer_key), 8, 10)
    return hashed, b64(salt)


users = []
for local_id, password, extra in [
    ("fb-ana", "amber-otter-17", {"email": "ana@fb.example", "emailVerified": True, "displayName": "Ana Beridze"}),
    ("fb-dato", "quiet-linden-42", {"email": "dato@fb.example", "emailVerified": False, "disabled": True}),
]:
    hashed, salt = firebase_hash(password)
    passwords[local_id] = password
    users.append({"localId": local_id, "passwordHash": hashed, "salt": salt, "createdAt": "1609459200000",
                  "lastSignedInAt": "1700000000000", "providerUserInfo": [{"providerId": "password", "rawId": extra["email"],
                                                                           "email": extra["email"]}], **extra})
users.append({"localId": "fb-nino", "phoneNumber": "+995599123456", "createdAt": "1609459200000",
              "providerUserInfo": [{"providerId": "phone", "rawId": "+995599123456", "phoneNumber": "+995599123456"}]})
users.append({"localId": "fb-levan", "email": "levan@fb.example", "emailVerified": True, "displayName": "Levan",
              "providerUserInfo": [{"providerId": "google.com", "rawId": "google-subject-1001", "email": "levan@fb.example"}]})
users.append({"localId": "fb-broken", "email": 42})
write("firebase-users.json", {"users": users})

# Auth0: the bulk-import file's users, with bcrypt, Argon2, PBKDF2 (PHC) and an MD5 digest.
auth0 = []
passwords["auth0|bcrypt"] = "cedar-harbor-08"
auth0.append({"user_id": "auth0|bcrypt", "email": "gio@a0.example", "email_verified": True, "given_name": "Gio",
              "family_name": "Kapanadze",
              "password_hash": bcrypt.hashpw(b"cedar-harbor-08", bcrypt.gensalt(rounds=4)).decode()})
passwords["auth0|argon2"] = "violet-meadow-63"
auth0.append({"user_id": "auth0|argon2", "email": "tamar@a0.example", "email_verified": True, "name": "Tamar",
              "custom_password_hash": {"algorithm": "argon2", "hash": {"value": argon2.PasswordHasher(
                  time_cost=2, memory_cost=1024, parallelism=2).hash("violet-meadow-63")}}})
salt = os.urandom(16)
digest = hashlib.pbkdf2_hmac("sha256", b"silver-brook-55", salt, 1000, 32)
passwords["auth0|pbkdf2"] = "silver-brook-55"
phc = "$pbkdf2-sha256$i=1000,l=32$%s$%s" % (b64(salt).rstrip("="), b64(digest).rstrip("="))
auth0.append({"user_id": "auth0|pbkdf2", "email": "irakli@a0.example", "email_verified": False,
              "custom_password_hash": {"algorithm": "pbkdf2", "hash": {"value": phc}}})
auth0.append({"user_id": "auth0|md5", "email": "md5@a0.example", "email_verified": True,
              "custom_password_hash": {"algorithm": "md5", "hash": {"value": hashlib.md5(b"x").hexdigest(), "encoding": "hex"}}})
auth0.append({"user_id": "google-oauth2|2002", "email": "eka@a0.example", "email_verified": True, "phone_number": "+995577200300",
              "phone_verified": True, "identities": [{"provider": "google-oauth2", "user_id": "google-subject-2002"}]})
write("auth0-users.json", auth0)

# The ledger's own JSON lines: Django's PBKDF2, passlib's scrypt, PHP's $2y$ bcrypt, and refusals.
passwords["jl-django"] = "copper-fjord-29"
passwords["jl-scrypt"] = "linen-comet-74"
passwords["jl-2y"] = "maple-ember-36"
lines = [
    {"external_id": "jl-django", "email": "django@jl.example", "email_verified": True, "display_name": "Django User",
     "password_hash": PBKDF2PasswordHasher().encode("copper-fjord-29", "seasalt77", iterations=1000),
     "created_at": "2020-05-01T10:00:00Z"},
    {"external_id": "jl-scrypt", "email": "scrypt@jl.example", "phone": "+995555123123", "phone_verified": True,
     "password_hash": scrypt.using(rounds=10, block_size=8, parallelism=1).hash("linen-comet-74")},
    {"external_id": "jl-2y", "email": "php@jl.example", "email_verified": True,
     "password_hash": "$2y$" + bcrypt.hashpw(b"maple-ember-36", bcrypt.gensalt(rounds=4)).decode()[4:]},
    {"external_id": "jl-apple", "providers": [{"provider": "apple", "subject": "apple-subject-3003", "email": "x@privaterelay.appleid.com"}]},
    {"external_id": "jl-bad-email", "email": "not an address"},
    {"external_id": "jl-bad-phone", "phone": "+99512", "phone_verified": True},
    {"external_id": "jl-md5", "email": "md5@jl.example", "password_hash": "5f4dcc3b5aa765d61d8327deb882cf99"},
    {"external_id": "jl-nothing", "display_name": "No Way In"},
]
text = [json.dumps(line, ensure_ascii=False) for line in lines]
text.insert(4, "{not json")
write("users.jsonl", text, lines=True)
write("passwords.json", passwords)
print(f"wrote {OUT}")
