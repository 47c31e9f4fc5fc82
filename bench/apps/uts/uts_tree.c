/* uts_tree.c: SHA-1 (FIPS 180-4, written from the standard) and the UTS geometric tree built on it. */
#include "uts_tree.h"

#include <math.h>
#include <string.h>

#define SHA1_BLOCK_BYTES   64
#define SHA1_LENGTH_BYTES  8 /* the message length in bits, big-endian, ends the padding */
#define SHA1_PAD_BYTE      0x80
#define UTS_SEED_OFFSET    16 /* the root seed's bytes follow 16 zero bytes */
#define UTS_RAND_OFFSET    16 /* a node's draw is in digest bytes 16..19 */
#define UTS_RAND_MASK      0x7fffffffu
#define UTS_RAND_SCALE     2147483648.0 /* 2^31: the draw as a fraction in [0, 1) */
#define UTS_CYCLIC_PERIODS 5            /* the cyclic shape ends after 5 periods */
#define UTS_PI             3.141592653589793

static inline uint32_t rotl(uint32_t x, int n)
{
    return (x << n) | (x >> (32 - n));
}

static inline uint32_t load_be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

static inline void store_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

/* One round (FIPS 180-4, 6.1.2 step 3) with the working variables renamed
 * instead of moved: the caller rotates the argument order every round. */
#define SHA1_ROUND(a, b, c, d, e, f, k, wt)                                                        \
    do {                                                                                           \
        e += rotl(a, 5) + (f) + (k) + (wt);                                                        \
        b = rotl(b, 30);                                                                           \
    } while (0)
#define SHA1_CH(b, c, d)     (((c ^ d) & b) ^ d) /* (b & c) | (~b & d) */
#define SHA1_PARITY(b, c, d) (b ^ c ^ d)
#define SHA1_MAJ(b, c, d)    ((b & c) | ((b | c) & d)) /* (b & c) | (b & d) | (c & d) */
/* The message schedule in a rolling window of 16 words (FIPS 180-4, 6.1.3
 * note: W_t overwrites W_{t-16}). The full 80-word array invites GCC -O3 to
 * vectorise its expansion, which made a block twice as slow here (shuffles
 * and a store-to-load stall per word); the window keeps each W_t in the
 * round that uses it, as reference implementations do. */
#define SHA1_W(t) w[(t)&15]
#define SHA1_EXPAND(t)                                                                             \
    (SHA1_W(t) = rotl(SHA1_W((t) + 13) ^ SHA1_W((t) + 8) ^ SHA1_W((t) + 2) ^ SHA1_W(t), 1))
#define SHA1_WT(t) ((t) < 16 ? SHA1_W(t) : SHA1_EXPAND(t))
/* Five rounds of one stage starting at round t, after which a..e are back in
 * their places. */
#define SHA1_FIVE(F, k, t)                                                                         \
    do {                                                                                           \
        SHA1_ROUND(a, b, c, d, e, F(b, c, d), k, SHA1_WT(t));                                      \
        SHA1_ROUND(e, a, b, c, d, F(a, b, c), k, SHA1_WT((t) + 1));                                \
        SHA1_ROUND(d, e, a, b, c, F(e, a, b), k, SHA1_WT((t) + 2));                                \
        SHA1_ROUND(c, d, e, a, b, F(d, e, a), k, SHA1_WT((t) + 3));                                \
        SHA1_ROUND(b, c, d, e, a, F(c, d, e), k, SHA1_WT((t) + 4));                                \
    } while (0)
#define SHA1_STAGE_ROUNDS 20
#define SHA1_K0           0x5a827999u
#define SHA1_K1           0x6ed9eba1u
#define SHA1_K2           0x8f1bbcdcu
#define SHA1_K3           0xca62c1d6u
/* A stage's 20 rounds written out, so that every t is a constant and
 * SHA1_WT's test folds away. */
#define SHA1_STAGE(F, k, t0)                                                                       \
    do {                                                                                           \
        SHA1_FIVE(F, k, (t0));                                                                     \
        SHA1_FIVE(F, k, (t0) + 5);                                                                 \
        SHA1_FIVE(F, k, (t0) + 10);                                                                \
        SHA1_FIVE(F, k, (t0) + 15);                                                                \
    } while (0)

/* One 512-bit block into the hash value h (FIPS 180-4, 6.1.2). */
static void sha1_block(uint32_t h[5], const uint8_t *block)
{
    uint32_t w[16];
    for (int t = 0; t < 16; t++)
        w[t] = load_be32(block + 4 * t);
    uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4];
    SHA1_STAGE(SHA1_CH, SHA1_K0, 0);
    SHA1_STAGE(SHA1_PARITY, SHA1_K1, SHA1_STAGE_ROUNDS);
    SHA1_STAGE(SHA1_MAJ, SHA1_K2, 2 * SHA1_STAGE_ROUNDS);
    SHA1_STAGE(SHA1_PARITY, SHA1_K3, 3 * SHA1_STAGE_ROUNDS);
    h[0] += a;
    h[1] += b;
    h[2] += c;
    h[3] += d;
    h[4] += e;
}

void uts_sha1(const void *msg, size_t len, uint8_t out[UTS_DIGEST_BYTES])
{
    uint32_t h[5] = { 0x67452301u, 0xefcdab89u, 0x98badcfeu, 0x10325476u, 0xc3d2e1f0u };
    const uint8_t *p = msg;
    size_t left = len;
    for (; left >= SHA1_BLOCK_BYTES; left -= SHA1_BLOCK_BYTES, p += SHA1_BLOCK_BYTES)
        sha1_block(h, p);
    /* The tail, the 1 bit, zeros and the length: one block, or two when the
     * tail leaves no room for the length. */
    uint8_t pad[2 * SHA1_BLOCK_BYTES] = { 0 };
    memcpy(pad, p, left);
    pad[left] = SHA1_PAD_BYTE;
    size_t padded =
        left + 1 + SHA1_LENGTH_BYTES <= SHA1_BLOCK_BYTES ? SHA1_BLOCK_BYTES : 2 * SHA1_BLOCK_BYTES;
    uint64_t bits = (uint64_t)len * 8;
    store_be32(pad + padded - 8, (uint32_t)(bits >> 32));
    store_be32(pad + padded - 4, (uint32_t)bits);
    for (size_t off = 0; off < padded; off += SHA1_BLOCK_BYTES)
        sha1_block(h, pad + off);
    for (int i = 0; i < 5; i++)
        store_be32(out + 4 * i, h[i]);
}

int uts_sha1_selftest(void)
{
    /* FIPS 180's examples: one block, two blocks (the length spills over). */
    static const struct {
        const char *msg;
        uint8_t digest[UTS_DIGEST_BYTES];
    } vec[] = {
        { "abc", { 0xa9, 0x99, 0x3e, 0x36, 0x47, 0x06, 0x81, 0x6a, 0xba, 0x3e,
                   0x25, 0x71, 0x78, 0x50, 0xc2, 0x6c, 0x9c, 0xd0, 0xd8, 0x9d } },
        { "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
          { 0x84, 0x98, 0x3e, 0x44, 0x1c, 0x3b, 0xd2, 0x6e, 0xba, 0xae,
            0x4a, 0xa1, 0xf9, 0x51, 0x29, 0xe5, 0xe5, 0x46, 0x70, 0xf1 } },
    };
    for (size_t i = 0; i < sizeof vec / sizeof vec[0]; i++) {
        uint8_t d[UTS_DIGEST_BYTES];
        uts_sha1(vec[i].msg, strlen(vec[i].msg), d);
        if (memcmp(d, vec[i].digest, sizeof d) != 0)
            return -1;
    }
    return 0;
}

void uts_root(const uts_tree *t, uts_node *root)
{
    uint8_t gen[UTS_DIGEST_BYTES] = { 0 };
    store_be32(gen + UTS_SEED_OFFSET, (uint32_t)t->seed);
    uts_sha1(gen, sizeof gen, root->state);
    root->height = 0;
}

void uts_child(const uts_node *parent, int i, uts_node *child)
{
    uint8_t msg[UTS_DIGEST_BYTES + 4];
    memcpy(msg, parent->state, UTS_DIGEST_BYTES);
    store_be32(msg + UTS_DIGEST_BYTES, (uint32_t)i);
    uts_sha1(msg, sizeof msg, child->state);
    child->height = parent->height + 1;
}

/* The expected branching factor at depth d; the root always gets b_0. */
static double branching(const uts_tree *t, int d)
{
    if (d == 0)
        return t->b0;
    switch (t->shape) {
    case UTS_SHAPE_EXPDEC: return t->b0 * pow((double)d, -log(t->b0) / log((double)t->gen_mx));
    case UTS_SHAPE_CYCLIC:
        if (d > UTS_CYCLIC_PERIODS * t->gen_mx)
            return 0.0;
        return pow(t->b0, sin(2.0 * UTS_PI * (double)d / (double)t->gen_mx));
    case UTS_SHAPE_FIXED: return d < t->gen_mx ? t->b0 : 0.0;
    case UTS_SHAPE_LINEAR:
    default: return t->b0 * (1.0 - (double)d / (double)t->gen_mx);
    }
}

/* The node's draw as a fraction in [0, 1). */
static double draw(const uts_node *n)
{
    return (double)(load_be32(n->state + UTS_RAND_OFFSET) & UTS_RAND_MASK) / UTS_RAND_SCALE;
}

static int geometric(const uts_tree *t, const uts_node *n)
{
    double p = 1.0 / (1.0 + branching(t, n->height));
    return (int)floor(log(1.0 - draw(n)) / log(1.0 - p));
}

static int binomial(const uts_tree *t, const uts_node *n)
{
    return draw(n) < t->q ? t->m : 0;
}

int uts_num_children(const uts_tree *t, const uts_node *n)
{
    int k;
    switch (t->type) {
    case UTS_BIN:
        if (n->height == 0)
            return (int)floor(t->b0); /* the root is not capped */
        k = binomial(t, n);
        break;
    case UTS_HYBRID: k = n->height < t->shift * t->gen_mx ? geometric(t, n) : binomial(t, n); break;
    case UTS_BALANCED: return n->height < t->gen_mx ? (int)t->b0 : 0;
    case UTS_GEO:
    default: k = geometric(t, n); break;
    }
    return k > UTS_MAX_CHILDREN ? UTS_MAX_CHILDREN : k;
}
