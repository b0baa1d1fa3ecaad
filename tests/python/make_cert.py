"""Writes a test certificate authority and a server certificate it signed for 127.0.0.1.

Usage: make_cert.py FOLDER. Writes FOLDER/ca.pem (the authority, for SSL_CERT_FILE),
FOLDER/server.pem and FOLDER/server.key (for the server). Valid for one day.
"""

import datetime
import ipaddress
import sys
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

folder = Path(sys.argv[1])
now = datetime.datetime.now(datetime.timezone.utc)
day = datetime.timedelta(days=1)


def name(text: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, text)])


ca_key = ec.generate_private_key(ec.SECP256R1())
ca = (
    x509.CertificateBuilder()
    .subject_name(name("toolshelf test CA"))
    .issuer_name(name("toolshelf test CA"))
    .public_key(ca_key.public_key())
    .serial_number(x509.random_serial_number())
    .not_valid_before(now - day)
    .not_valid_after(now + day)
    .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
    .add_extension(x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True)
    .sign(ca_key, hashes.SHA256())
)
key = ec.generate_private_key(ec.SECP256R1())
server = (
    x509.CertificateBuilder()
    .subject_name(name("127.0.0.1"))
    .issuer_name(ca.subject)
    .public_key(key.public_key())
    .serial_number(x509.random_serial_number())
    .not_valid_before(now - day)
    .not_valid_after(now + day)
    .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
    .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
    .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
    .sign(ca_key, hashes.SHA256())
)
(folder / "ca.pem").write_bytes(ca.public_bytes(serialization.Encoding.PEM))
(folder / "server.pem").write_bytes(server.public_bytes(serialization.Encoding.PEM))
(folder / "server.key").write_bytes(
    key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
)
