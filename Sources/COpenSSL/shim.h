#ifndef COPENSSL_SHIM_H
#define COPENSSL_SHIM_H
#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/bio.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <openssl/pem.h>

/// OpenSSL's ctrl-macros cannot be imported by Swift; these wrap the ones we use.
static inline long COpenSSL_SSL_CTX_set_min_proto_version(SSL_CTX *ctx, int version) {
    return SSL_CTX_set_min_proto_version(ctx, version);
}

static inline long COpenSSL_SSL_CTX_set_max_proto_version(SSL_CTX *ctx, int version) {
    return SSL_CTX_set_max_proto_version(ctx, version);
}

static inline long COpenSSL_SSL_CTX_get_min_proto_version(SSL_CTX *ctx) {
    return SSL_CTX_get_min_proto_version(ctx);
}

static inline long COpenSSL_SSL_CTX_get_max_proto_version(SSL_CTX *ctx) {
    return SSL_CTX_get_max_proto_version(ctx);
}

static inline long COpenSSL_SSL_CTX_set_mode(SSL_CTX *ctx, long mode) {
    return SSL_CTX_set_mode(ctx, mode);
}

static inline long COpenSSL_SSL_set_tlsext_host_name(SSL *ssl, const char *name) {
    return SSL_set_tlsext_host_name(ssl, name);
}

static inline int COpenSSL_BIO_pending(BIO *bio) {
    return (int)BIO_ctrl_pending(bio);
}

/// The SSL_OP_* flags are built with SSL_OP_BIT (a cast-and-shift macro Swift cannot import).
static const uint64_t COpenSSL_SSL_OP_NO_COMPRESSION = SSL_OP_NO_COMPRESSION;
static const uint64_t COpenSSL_SSL_OP_NO_RENEGOTIATION = SSL_OP_NO_RENEGOTIATION;
#endif
