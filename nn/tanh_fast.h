/* tanh_fast: tanh and sigmoid without libm, in plain C11 and dependency-free.
 *
 * The single definition of these approximations: the sequence ops (nn/seq.h: LSTM, additive attention)
 * include it, and `heurist export --format c` copies it verbatim into a seq2seq runtime, so both compute
 * the same floats. Forced inline under GCC and Clang, so that loops over them vectorise (and the AVX2
 * clones of nn/lstm.c get the wide instructions).
 */
#ifndef HEURIST_NN_TANH_FAST_H
#define HEURIST_NN_TANH_FAST_H

#if defined(__GNUC__)
#define NN_TANH_FAST_INLINE static inline __attribute__((always_inline))
#else
#define NN_TANH_FAST_INLINE static inline
#endif

/* tanh as a [13/6] rational function on the clamped range |x| <= 7.905 (Eigen's fast tanh):
 * |error| <= 4e-7 everywhere, no libm call. */
NN_TANH_FAST_INLINE float nn_tanh_fast(float x)
{
    const float clamp = 7.90531110763549805f;
    x = x > clamp ? clamp : (x < -clamp ? -clamp : x);
    float x2 = x * x;
    float p = x2 * -2.76076847742355e-16f + 2.00018790482477e-13f;
    p = x2 * p + -8.60467152213735e-11f;
    p = x2 * p + 5.12229709037114e-08f;
    p = x2 * p + 1.48572235717979e-05f;
    p = x2 * p + 6.37261928875436e-04f;
    p = x2 * p + 4.89352455891786e-03f;
    float q = x2 * 1.19825839466702e-06f + 1.18534705686654e-04f;
    q = x2 * q + 2.26843463243900e-03f;
    q = x2 * q + 4.89352518554385e-03f;
    return x * p / q;
}

/* sigmoid(x) = (1 + tanh(x/2)) / 2 keeps the same absolute error. */
NN_TANH_FAST_INLINE float nn_sigmoid_fast(float x)
{
    return 0.5f + 0.5f * nn_tanh_fast(0.5f * x);
}

#endif
