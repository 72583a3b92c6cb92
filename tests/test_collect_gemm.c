/* collect gemm: shape lines, configuration names and fields, the gzip table and its resume scan, the schema
 * and capability JSON (checked with cJSON), the seeded draws. */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "gemm.h"
#include "helpers/testutil.h"

Test(collect_gemm_shape, valid_lines_and_comments)
{
    collect_gemm_shape s;
    cr_assert_eq(collect_gemm_shape_parse("4096 11008 4096 bf16 N T  # llm\n", &s), 0, "%s", collect_last_error());
    cr_assert_eq(s.m, 4096);
    cr_assert_eq(s.n, 11008);
    cr_assert_eq(s.k, 4096);
    cr_assert_eq(s.dtype, COLLECT_GEMM_BF16);
    cr_assert_eq(s.trans_a, 'N');
    cr_assert_eq(s.trans_b, 'T');
    cr_assert_eq(collect_gemm_shape_parse("\t1 1 1 tf32 T N", &s), 0);
    cr_assert_eq(s.dtype, COLLECT_GEMM_TF32);
    cr_assert_eq(collect_gemm_shape_parse("# only a comment\n", &s), 1);
    cr_assert_eq(collect_gemm_shape_parse("   \n", &s), 1);
    char key[128];
    cr_assert_eq(collect_gemm_shape_key(&s, key, sizeof key), 0);
    cr_assert_str_eq(key, "1,1,1,tf32,T,N");
    cr_assert_eq(collect_gemm_shape_key(&s, key, 5), COLLECT_EINVAL);
    cr_assert_eq(s.batch, 1, "no BATCH field: a single GEMM");
}

/* fp8e4m3: E4M3 A and B (a byte each), bf16 C and D */
Test(collect_gemm_shape, fp8_dtype_and_sizes)
{
    collect_gemm_shape s;
    cr_assert_eq(collect_gemm_shape_parse("4096 2048 1024 fp8e4m3 T N 2  # llama3", &s), 0, "%s", collect_last_error());
    cr_assert_eq(s.dtype, COLLECT_GEMM_FP8E4M3);
    cr_assert_str_eq(collect_gemm_dtype_name(s.dtype), "fp8e4m3");
    char key[128];
    cr_assert_eq(collect_gemm_shape_key(&s, key, sizeof key), 0);
    cr_assert_str_eq(key, "4096,2048,1024,fp8e4m3,T,N,2");
    size_t a, b, d;
    collect_gemm_shape_bytes(&s, &a, &b, &d);
    cr_assert_eq(a, (size_t)2 * 4096 * 1024);
    cr_assert_eq(b, (size_t)2 * 1024 * 2048);
    cr_assert_eq(d, (size_t)2 * 4096 * 2048 * 2, "D is bf16");
    cr_assert_eq(collect_gemm_dtype_bytes(COLLECT_GEMM_FP8E4M3), 1);
    cr_assert_eq(collect_gemm_dtype_out_bytes(COLLECT_GEMM_FP8E4M3), 2);
    cr_assert_eq(collect_gemm_dtype_out_bytes(COLLECT_GEMM_FP32), 4);
}

Test(collect_gemm_shape, batch_field_key_and_sizes)
{
    collect_gemm_shape s, one;
    cr_assert_eq(collect_gemm_shape_parse("2048 2048 128 bf16 T N 256  # llama3-8b attn\n", &s), 0, "%s",
                 collect_last_error());
    cr_assert_eq(s.batch, 256);
    char key[128];
    cr_assert_eq(collect_gemm_shape_key(&s, key, sizeof key), 0);
    cr_assert_str_eq(key, "2048,2048,128,bf16,T,N,256");
    cr_assert_eq(collect_gemm_shape_parse("2048 2048 128 bf16 T N 1", &one), 0);
    cr_assert_eq(collect_gemm_shape_key(&one, key, sizeof key), 0);
    cr_assert_str_eq(key, "2048,2048,128,bf16,T,N", "batch 1 keeps the six-column key");
    /* operands, FLOPs and the cost estimate scale with the batch */
    size_t a, b, d, a1, b1, d1;
    collect_gemm_shape_bytes(&s, &a, &b, &d);
    collect_gemm_shape_bytes(&one, &a1, &b1, &d1);
    cr_assert(a == 256 * a1 && b == 256 * b1 && d == 256 * d1);
    cr_assert_eq(a1, (size_t)2048 * 128 * 2);
    cr_assert_float_eq(collect_gemm_shape_flops(&s), 256.0 * 2 * 2048 * 2048 * 128, 1.0);
    cr_assert_gt(collect_gemm_shape_cost_s(&s, 64, 32), collect_gemm_shape_cost_s(&one, 64, 32));
    /* a row's key: the seven problem columns, the batch left out when 1 */
    cr_assert_eq(collect_gemm_row_key("7,9,11,fp32,T,N,96,66,128\n", key, sizeof key), 0);
    cr_assert_str_eq(key, "7,9,11,fp32,T,N,96");
    cr_assert_eq(collect_gemm_row_key("7,9,11,fp32,T,N,1,66,128\n", key, sizeof key), 0);
    cr_assert_str_eq(key, "7,9,11,fp32,T,N");
    cr_assert_eq(collect_gemm_row_key("7,9,11,fp32,T,N,10,66\n", key, sizeof key), 0);
    cr_assert_str_eq(key, "7,9,11,fp32,T,N,10");
    cr_assert_eq(collect_gemm_row_key("7,9,11,fp32,T,N,96\n", key, sizeof key), COLLECT_EFORMAT);
    cr_assert_eq(collect_gemm_row_key("7,9,11,fp32,T,N,96,66,128\n", key, 8), COLLECT_EINVAL);
}

Test(collect_gemm_shape, malformed_lines_say_why)
{
    collect_gemm_shape s;
    cr_assert_eq(collect_gemm_shape_parse("1 2 3 bf16 N", &s), COLLECT_EFORMAT);
    cr_assert(strstr(collect_last_error(), "5 fields"), "%s", collect_last_error());
    cr_assert_eq(collect_gemm_shape_parse("1 2 3 bf16 N N extra", &s), COLLECT_EFORMAT);
    cr_assert(strstr(collect_last_error(), "BATCH 'extra'"), "%s", collect_last_error());
    cr_assert_eq(collect_gemm_shape_parse("1 2 3 bf16 N N 0", &s), COLLECT_EFORMAT);
    cr_assert(strstr(collect_last_error(), "BATCH '0': expected an integer in [1, 65536]"), "%s", collect_last_error());
    cr_assert_eq(collect_gemm_shape_parse("1 2 3 bf16 N N 65537", &s), COLLECT_EFORMAT);
    cr_assert_eq(collect_gemm_shape_parse("1 2 3 bf16 N N -4", &s), COLLECT_EFORMAT);
    /* sizes as the table writes them: a sign or a leading zero would give a key the scripts spell otherwise */
    cr_assert_eq(collect_gemm_shape_parse("1 2 3 bf16 N N +2", &s), COLLECT_EFORMAT);
    cr_assert(strstr(collect_last_error(), "BATCH '+2'"), "%s", collect_last_error());
    cr_assert_eq(collect_gemm_shape_parse("1 2 3 bf16 N N 02", &s), COLLECT_EFORMAT);
    cr_assert_eq(collect_gemm_shape_parse("064 2 3 bf16 N N", &s), COLLECT_EFORMAT);
    cr_assert(strstr(collect_last_error(), "M '064'"), "%s", collect_last_error());
    cr_assert_eq(collect_gemm_shape_parse("1 2 3 bf16 N N 4 4", &s), COLLECT_EFORMAT);
    cr_assert(strstr(collect_last_error(), "more than 7 fields"), "%s", collect_last_error());
    cr_assert_eq(collect_gemm_shape_parse("0 2 3 bf16 N N", &s), COLLECT_EFORMAT);
    cr_assert(strstr(collect_last_error(), "M '0'"), "%s", collect_last_error());
    cr_assert_eq(collect_gemm_shape_parse("1 2x 3 bf16 N N", &s), COLLECT_EFORMAT);
    cr_assert(strstr(collect_last_error(), "N '2x'"), "%s", collect_last_error());
    cr_assert_eq(collect_gemm_shape_parse("1 2 3 int8 N N", &s), COLLECT_EFORMAT);
    cr_assert(strstr(collect_last_error(), "data type 'int8': expected bf16, fp16, fp32, tf32 or fp8e4m3"), "%s",
              collect_last_error());
    cr_assert_eq(collect_gemm_shape_parse("1 2 3 fp8 T N", &s), COLLECT_EFORMAT);
    cr_assert(strstr(collect_last_error(), "data type 'fp8'"), "%s", collect_last_error());
    cr_assert_eq(collect_gemm_shape_parse("1 2 3 fp16 N C", &s), COLLECT_EFORMAT);
    cr_assert(strstr(collect_last_error(), "TRANS_B"), "%s", collect_last_error());
}

Test(collect_gemm_shape, file_errors_name_the_line)
{
    static const char text[] = "# shapes\n8 8 8 fp32 N N\n\n16 16 x fp16 T T\n";
    char *path = test_tmpfile("shapes", text, sizeof text - 1);
    collect_gemm_shape *sh = NULL;
    int n = -1;
    cr_assert_eq(collect_gemm_shapes_read(path, &sh, &n), COLLECT_EFORMAT);
    cr_assert(strstr(collect_last_error(), ":4: K 'x'"), "%s", collect_last_error());
    cr_assert_null(sh);
    cr_assert_eq(n, 0);
    remove(path);
    free(path);
    static const char batches[] = "8 8 8 fp32 N N\n16 16 16 fp16 T N 12 # attn\n16 16 16 fp16 T N 1.5\n";
    path = test_tmpfile("shapes", batches, sizeof batches - 1);
    cr_assert_eq(collect_gemm_shapes_read(path, &sh, &n), COLLECT_EFORMAT);
    cr_assert(strstr(collect_last_error(), ":3: BATCH '1.5'"), "%s", collect_last_error());
    remove(path);
    free(path);
    static const char batched[] = "8 8 8 fp32 N N\n16 16 16 fp16 T N 12 # attn\n";
    path = test_tmpfile("shapes", batched, sizeof batched - 1);
    cr_assert_eq(collect_gemm_shapes_read(path, &sh, &n), 0, "%s", collect_last_error());
    cr_assert_eq(n, 2);
    cr_assert(sh[0].batch == 1 && sh[1].batch == 12);
    free(sh);
    remove(path);
    free(path);
    static const char good[] = "8 8 8 fp32 N N\n# x\n16 32 64 fp16 T T # conv\n";
    path = test_tmpfile("shapes", good, sizeof good - 1);
    cr_assert_eq(collect_gemm_shapes_read(path, &sh, &n), 0, "%s", collect_last_error());
    cr_assert_eq(n, 2);
    cr_assert_eq(sh[1].n, 32);
    free(sh);
    remove(path);
    free(path);
}

Test(collect_gemm_enum, tile_stage_and_cluster_names)
{
    int a, b, id;
    /* CUBLASLT_MATMUL_TILE_128x256 = 23, _64x96 = 26, _512x1024 = 634 (cublasLt.h of CUDA 13) */
    cr_assert_eq(collect_gemm_enum_sizes(collect_gemm_tiles, collect_gemm_n_tiles, 23, &a, &b), 0);
    cr_assert(a == 128 && b == 256);
    cr_assert_eq(collect_gemm_enum_sizes(collect_gemm_tiles, collect_gemm_n_tiles, 26, &a, &b), 0);
    cr_assert(a == 64 && b == 96);
    cr_assert_eq(collect_gemm_enum_sizes(collect_gemm_tiles, collect_gemm_n_tiles, 634, &a, &b), 0);
    cr_assert(a == 512 && b == 1024);
    cr_assert_eq(collect_gemm_enum_sizes(collect_gemm_tiles, collect_gemm_n_tiles, 0, &a, &b), 0);
    cr_assert(a == 0 && b == 0, "undefined tile");
    cr_assert_eq(collect_gemm_enum_sizes(collect_gemm_tiles, collect_gemm_n_tiles, 100000, &a, &b), COLLECT_EINVAL);
    cr_assert_eq(collect_gemm_enum_id(collect_gemm_tiles, collect_gemm_n_tiles, 256, 128, &id), 0);
    cr_assert_eq(id, 24);
    /* CUBLASLT_MATMUL_STAGES_64x3 = 15, _64xAUTO = 35 */
    cr_assert_eq(collect_gemm_enum_sizes(collect_gemm_stages, collect_gemm_n_stages, 15, &a, &b), 0);
    cr_assert(a == 64 && b == 3);
    cr_assert_eq(collect_gemm_enum_sizes(collect_gemm_stages, collect_gemm_n_stages, 35, &a, &b), 0);
    cr_assert(a == 64 && b == 0);
    /* CUBLASLT_CLUSTER_SHAPE_2x1x1 = 3, _1x2x1 = 5, AUTO = 0 */
    cr_assert_eq(collect_gemm_enum_sizes(collect_gemm_clusters, collect_gemm_n_clusters, 3, &a, &b), 0);
    cr_assert(a == 2 && b == 1);
    cr_assert_eq(collect_gemm_enum_sizes(collect_gemm_clusters, collect_gemm_n_clusters, 5, &a, &b), 0);
    cr_assert(a == 1 && b == 2);
    cr_assert_gt(collect_gemm_tiles_end, 600);
    for (int i = 1; i < collect_gemm_n_tiles; i++) cr_assert_lt(collect_gemm_tiles[i - 1].id, collect_gemm_tiles[i].id);
}

Test(collect_gemm_config, name_round_trip)
{
    collect_gemm_config c = {66, 23, 15, 4, 2, 1, 3, 6, 0}, d;
    char name[256];
    cr_assert_eq(collect_gemm_config_name(&c, name, sizeof name), 0, "%s", collect_last_error());
    cr_assert_str_eq(name, "algo_id=66,tile_m=128,tile_n=256,stage_k=64,stages=3,split_k=4,reduction_scheme=2,"
                           "swizzle=1,custom_option=3,cluster_m=2,cluster_n=2,inner_shape=0");
    cr_assert_eq(collect_gemm_config_parse(name, &d), 0, "%s", collect_last_error());
    cr_assert(collect_gemm_config_equal(&c, &d));
    int f[COLLECT_GEMM_N_FIELDS];
    cr_assert_eq(collect_gemm_config_fields(&c, f), 0);
    cr_assert_eq(collect_gemm_config_from_fields(f, &d), 0);
    cr_assert(collect_gemm_config_equal(&c, &d));
    /* every tile, stages and cluster id survives the round trip */
    for (int i = 0; i < collect_gemm_n_tiles; i++) {
        c.tile_id = collect_gemm_tiles[i].id;
        c.stages_id = collect_gemm_stages[i % collect_gemm_n_stages].id;
        c.cluster_id = collect_gemm_clusters[i % collect_gemm_n_clusters].id;
        cr_assert_eq(collect_gemm_config_name(&c, name, sizeof name), 0);
        cr_assert_eq(collect_gemm_config_parse(name, &d), 0, "%s", collect_last_error());
        cr_assert(collect_gemm_config_equal(&c, &d), "%s", name);
    }
    cr_assert_eq(collect_gemm_config_name(&c, name, 20), COLLECT_EINVAL);
    c.tile_id = 99999;
    cr_assert_eq(collect_gemm_config_name(&c, name, sizeof name), COLLECT_EINVAL);
    cr_assert_eq(collect_gemm_config_parse("algo_id=1,tile_m=128", &d), COLLECT_EFORMAT);
    cr_assert_eq(collect_gemm_config_parse("algo_id=66,tile_m=100,tile_n=256,stage_k=64,stages=3,split_k=4,"
                                           "reduction_scheme=2,swizzle=1,custom_option=3,cluster_m=2,cluster_n=2,"
                                           "inner_shape=0", &d), COLLECT_EFORMAT);
    cr_assert(strstr(collect_last_error(), "100 x 256"), "%s", collect_last_error());
}

/* the whole decompressed text of a gzip file (every member) */
static char *gunzip_all(const char *path)
{
    gzFile gz = gzopen(path, "rb");
    cr_assert_not_null(gz);
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    int got;
    while ((got = gzread(gz, buf + n, (unsigned)(cap - n - 1))) > 0) {
        n += (size_t)got;
        if (cap - n < 1024) buf = realloc(buf, cap *= 2);
    }
    cr_assert_geq(got, 0, "gzread: a damaged member");
    gzclose(gz);
    buf[n] = '\0';
    return buf;
}

static const collect_gemm_shape shape_a = {64, 128, 256, COLLECT_GEMM_BF16, 'N', 'T', 1};
static const collect_gemm_shape shape_b = {7, 9, 11, COLLECT_GEMM_FP32, 'T', 'N', 1};

static void rows_make(collect_gemm_row r[2])
{
    r[0] = (collect_gemm_row){{66, 23, 15, 1, 0, 0, 0, 0, 0}, 12.3456789, 0, 0};
    r[1] = (collect_gemm_row){{6, 20, 9, 2, 1, 1, 0, 3, 4}, 20.0, -1, 4096};
}

Test(collect_gemm_table, rows_and_gzip_members)
{
    collect_gemm_row r[2];
    rows_make(r);
    char line[512];
    int len = collect_gemm_row_format(&shape_a, &r[0], line, sizeof line);
    cr_assert_gt(len, 0, "%s", collect_last_error());
    cr_assert_str_eq(line, "64,128,256,bf16,N,T,1,66,128,256,64,3,1,0,0,0,0,0,0,12.3457,0,0\n");
    cr_assert_eq(collect_gemm_row_format(&shape_a, &r[1], line, sizeof line), (int)strlen(line));
    cr_assert_str_eq(line, "64,128,256,bf16,N,T,1,6,128,128,32,3,2,1,1,0,2,1,4,20,,4096\n");
    char *path = test_tmppath(".csv.gz");
    collect_gemm_out o;
    cr_assert_eq(collect_gemm_out_open(&o, path, 0), 0, "%s", collect_last_error());
    cr_assert_eq(collect_gemm_out_write(&o, &shape_a, r, 2), 0, "%s", collect_last_error());
    cr_assert_eq(collect_gemm_out_write(&o, &shape_b, r, 1), 0);
    collect_gemm_shape batched = shape_b;
    batched.batch = 96;
    cr_assert_eq(collect_gemm_out_write(&o, &batched, r, 1), 0);
    cr_assert_eq(collect_gemm_out_close(&o), 0);
    char *text = gunzip_all(path);
    cr_assert(strncmp(text, collect_gemm_csv_header(), strlen(collect_gemm_csv_header())) == 0);
    cr_assert(strstr(text, "\n7,9,11,fp32,T,N,1,66,"), "%s", text);
    cr_assert(strstr(text, "\n7,9,11,fp32,T,N,96,66,"), "%s", text);
    int lines = 0;
    for (char *c = text; *c; c++) lines += *c == '\n';
    cr_assert_eq(lines, 5);
    free(text);
    collect_gemm_done d;
    cr_assert_eq(collect_gemm_done_scan(path, &d), 0, "%s", collect_last_error());
    cr_assert_eq(d.n, 3);
    cr_assert_eq(d.rows, 4);
    cr_assert_eq(d.truncated, 0);
    /* a single GEMM's key is the six columns (as in a table without the batch column), a batch's has its count */
    cr_assert(collect_gemm_done_has(&d, "64,128,256,bf16,N,T"));
    cr_assert(collect_gemm_done_has(&d, "7,9,11,fp32,T,N"));
    cr_assert(collect_gemm_done_has(&d, "7,9,11,fp32,T,N,96"));
    cr_assert_not(collect_gemm_done_has(&d, "7,9,11,fp32,T,N,1"));
    cr_assert_not(collect_gemm_done_has(&d, "7,9,11,fp32,T,T"));
    FILE *f = fopen(path, "rb");
    fseek(f, 0, SEEK_END);
    cr_assert_eq(d.good_bytes, ftell(f));
    fclose(f);
    collect_gemm_done_free(&d);
    remove(path);
    free(path);
}

Test(collect_gemm_table, resume_drops_an_unfinished_shape_and_appends)
{
    collect_gemm_row r[2];
    rows_make(r);
    char *path = test_tmppath(".csv.gz");
    collect_gemm_out o;
    cr_assert_eq(collect_gemm_out_open(&o, path, 0), 0);
    cr_assert_eq(collect_gemm_out_write(&o, &shape_a, r, 2), 0);
    cr_assert_eq(collect_gemm_out_close(&o), 0);
    collect_gemm_done d;
    cr_assert_eq(collect_gemm_done_scan(path, &d), 0);
    long good = d.good_bytes;
    collect_gemm_done_free(&d);
    /* an interrupted run: shape_b's member begun (rows written, member not finished), then a kill */
    gzFile gz = gzopen(path, "ab");
    char line[512];
    int len = collect_gemm_row_format(&shape_b, &r[0], line, sizeof line);
    for (int i = 0; i < 200; i++) gzwrite(gz, line, (unsigned)len);
    gzflush(gz, Z_SYNC_FLUSH); /* bytes on disk, no member end */
    cr_assert_eq(collect_gemm_done_scan(path, &d), 0, "%s", collect_last_error());
    cr_assert_eq(d.n, 1, "the unfinished shape is not done");
    cr_assert(d.truncated);
    cr_assert_eq(d.good_bytes, good);
    cr_assert_not(collect_gemm_done_has(&d, "7,9,11,fp32,T,N"));
    gzclose_w(gz); /* (finishes a member the scan above saw unfinished; the resume cuts it off anyway) */
    /* the resumed run cuts the file back and appends the redone shape */
    cr_assert_eq(collect_gemm_out_open(&o, path, d.good_bytes), 0, "%s", collect_last_error());
    collect_gemm_done_free(&d);
    cr_assert_eq(collect_gemm_out_write(&o, &shape_b, r, 2), 0);
    cr_assert_eq(collect_gemm_out_close(&o), 0);
    char *text = gunzip_all(path);
    int b_rows = 0;
    for (char *c = text; (c = strstr(c, "\n7,9,11,fp32,T,N,1,")); c++) b_rows++;
    cr_assert_eq(b_rows, 2, "the redone shape's rows only: %s", text);
    free(text);
    cr_assert_eq(collect_gemm_done_scan(path, &d), 0);
    cr_assert_eq(d.n, 2);
    cr_assert_eq(d.rows, 4);
    cr_assert_not(d.truncated);
    collect_gemm_done_free(&d);
    remove(path);
    free(path);
}

Test(collect_gemm_table, missing_and_foreign_files)
{
    collect_gemm_done d;
    char *path = test_tmppath(".csv.gz");
    cr_assert_eq(collect_gemm_done_scan(path, &d), 0, "a missing file is an empty table");
    cr_assert_eq(d.n, 0);
    cr_assert_eq(d.good_bytes, 0);
    free(path);
    path = test_tmpfile("plain.csv.gz", "M,N\n1,2\n", 8);
    cr_assert_eq(collect_gemm_done_scan(path, &d), COLLECT_EFORMAT, "not gzip");
    remove(path);
    free(path);
    path = test_tmppath(".csv.gz");
    gzFile gz = gzopen(path, "wb");
    gzputs(gz, "a,b,c\n1,2,3\n");
    gzclose(gz);
    cr_assert_eq(collect_gemm_done_scan(path, &d), COLLECT_EFORMAT, "another table's header");
    cr_assert(strstr(collect_last_error(), "header"), "%s", collect_last_error());
    remove(path);
    free(path);
    /* a table without the batch column is read, not appended to */
    path = test_tmppath(".csv.gz");
    gz = gzopen(path, "wb");
    gzputs(gz, collect_gemm_csv_header_unbatched());
    gzclose(gz);
    cr_assert_eq(collect_gemm_done_scan(path, &d), COLLECT_EFORMAT);
    cr_assert(strstr(collect_last_error(), "without the batch column: collect into a new file"), "%s",
              collect_last_error());
    remove(path);
    free(path);
}

Test(collect_gemm_read, the_rows_written_come_back)
{
    collect_gemm_row r[2];
    rows_make(r);
    char *path = test_tmppath(".csv.gz");
    collect_gemm_out o;
    cr_assert_eq(collect_gemm_out_open(&o, path, 0), 0);
    cr_assert_eq(collect_gemm_out_write(&o, &shape_a, r, 2), 0);
    cr_assert_eq(collect_gemm_out_write(&o, &shape_b, r + 1, 1), 0);
    collect_gemm_shape batched = shape_b, fp8 = shape_a;
    batched.batch = 40;
    fp8.dtype = COLLECT_GEMM_FP8E4M3;
    cr_assert_eq(collect_gemm_out_write(&o, &batched, r, 2), 0);
    cr_assert_eq(collect_gemm_out_write(&o, &fp8, r, 1), 0);
    cr_assert_eq(collect_gemm_out_close(&o), 0);
    collect_gemm_measured *m;
    int n;
    cr_assert_eq(collect_gemm_measured_read(path, &m, &n), 0, "%s", collect_last_error());
    cr_assert_eq(n, 4, "the batched and the FP8 shape are problems of their own");
    cr_assert(m[0].s.batch == 1 && m[1].s.batch == 1 && m[2].s.batch == 40);
    cr_assert(m[3].s.dtype == COLLECT_GEMM_FP8E4M3 && m[3].s.m == 64 && m[3].n == 1);
    cr_assert(m[2].s.m == 7 && m[2].n == 2 && collect_gemm_config_equal(&m[2].rows[1].cfg, &r[1].cfg));
    cr_assert_eq(m[0].n, 2);
    cr_assert_eq(m[1].n, 1);
    cr_assert(m[0].s.m == 64 && m[0].s.n == 128 && m[0].s.k == 256 && m[0].s.dtype == COLLECT_GEMM_BF16);
    cr_assert(m[0].s.trans_a == 'N' && m[0].s.trans_b == 'T');
    cr_assert(m[1].s.m == 7 && m[1].s.dtype == COLLECT_GEMM_FP32 && m[1].s.trans_a == 'T');
    cr_assert(collect_gemm_config_equal(&m[0].rows[0].cfg, &r[0].cfg));
    cr_assert(collect_gemm_config_equal(&m[0].rows[1].cfg, &r[1].cfg));
    cr_assert(collect_gemm_config_equal(&m[1].rows[0].cfg, &r[1].cfg));
    cr_assert_float_eq(m[0].rows[0].time_us, 12.3457, 1e-9, "six significant digits as written");
    cr_assert_eq(m[0].rows[0].heuristic_rank, 0);
    cr_assert_eq(m[0].rows[1].heuristic_rank, -1, "an empty rank: not in the heuristic's list");
    cr_assert_eq(m[0].rows[1].workspace, 4096);
    collect_gemm_measured_free(m, n);
    remove(path);
    free(path);
}

/* A plain-text table under header (the collector's, or the one without the batch column) with a good first row
 * and `row` after it; the read fails naming the line and the field. */
static void read_bad_under(const char *header, const char *good, const char *row, const char *expect)
{
    char text[2048];
    snprintf(text, sizeof text, "%s%s\n%s", header, good, row);
    char *path = test_tmpfile("bad.csv", text, strlen(text));
    collect_gemm_measured *m;
    int n;
    cr_assert_eq(collect_gemm_measured_read(path, &m, &n), COLLECT_EFORMAT, "accepted: %s", row);
    cr_assert(strstr(collect_last_error(), expect), "'%s' -> %s", row, collect_last_error());
    cr_assert(strstr(collect_last_error(), "bad.csv"), "%s", collect_last_error());
    cr_assert_null(m);
    remove(path);
    free(path);
}

static void read_bad(const char *row, const char *expect)
{
    read_bad_under(collect_gemm_csv_header_unbatched(), "64,128,256,bf16,N,T,66,128,256,64,3,1,0,0,0,0,0,0,12.3457,0,0",
                   row, expect);
}

static void read_bad_batched(const char *row, const char *expect)
{
    read_bad_under(collect_gemm_csv_header(), "64,128,256,bf16,N,T,8,66,128,256,64,3,1,0,0,0,0,0,0,12.3457,0,0", row,
                   expect);
}

Test(collect_gemm_read, malformed_rows_name_line_and_field)
{
    read_bad("64,128,256,bf16,N,T,66,128,256,64,3,1,0,0,0,0,0\n", ":3: expected 21");
    read_bad("64,128,256,bf17,N,T,66,128,256,64,3,1,0,0,0,0,0,0,1,0,0\n", ":3: data type 'bf17'");
    read_bad("64,128,256,bf16,N,T,66,128,x,64,3,1,0,0,0,0,0,0,1,0,0\n", ":3: tile_n 'x'");
    read_bad("64,128,256,bf16,N,T,66,128,250,64,3,1,0,0,0,0,0,0,1,0,0\n", ":3: the configuration's fields");
    read_bad("64,128,256,bf16,N,T,66,128,256,64,3,1,0,0,0,0,0,0,0,0,0\n", ":3: time_us '0'");
    read_bad("64,128,256,bf16,N,T,66,128,256,64,3,1,0,0,0,0,0,0,1,-2,0\n", ":3: heuristic_rank '-2'");
    read_bad("64,128,256,bf16,N,T,66,128,256,64,3,1,0,0,0,0,0,0,1,0,-5\n", ":3: workspace '-5'");
    read_bad("64,128,256,bf16,N,T,66,128,256,64,3,1,0,0,0,0,0,0,1,0,0,7\n", ":3: expected 21");
    read_bad("7,9,11,fp32,T,N,66,128,256,64,3,1,0,0,0,0,0,0,1,0,0\n"
             "64,128,256,bf16,N,T,66,128,256,64,3,1,0,0,0,0,0,0,2,,0\n", "64,128,256,bf16,N,T appears in two");
    read_bad("64,,256,bf16,N,T,66,128,256,64,3,1,0,0,0,0,0,0,1,0,0\n", ":3: N '': expected one word");
    /* the batch column */
    read_bad_batched("64,128,256,bf16,N,T,66,128,256,64,3,1,0,0,0,0,0,0,1,0,0\n", ":3: expected 22");
    read_bad_batched("64,128,256,bf16,N,T,0,66,128,256,64,3,1,0,0,0,0,0,0,1,0,0\n", ":3: BATCH '0'");
    read_bad_batched("64,128,256,bf16,N,T,x,66,128,256,64,3,1,0,0,0,0,0,0,1,0,0\n", ":3: BATCH 'x'");
    read_bad_batched("64,128,256,bf16,N,T,,66,128,256,64,3,1,0,0,0,0,0,0,1,0,0\n", ":3: batch '': expected one word");
    read_bad_batched("64,128,256,bf16,N,T,65537,66,128,256,64,3,1,0,0,0,0,0,0,1,0,0\n", ":3: BATCH '65537'");
    read_bad_batched("64,128,256,bf16,N,T,4,66,128,256,64,3,1,0,0,0,0,0,0,1,0,0\n"
                     "64,128,256,bf16,N,T,8,66,128,256,64,3,1,0,0,0,0,0,0,2,,0\n", "64,128,256,bf16,N,T,8 appears in two");
    /* another table's header */
    char *path = test_tmpfile("other.csv", "M,N,K\n1,2,3\n", 12);
    collect_gemm_measured *m;
    int n;
    cr_assert_eq(collect_gemm_measured_read(path, &m, &n), COLLECT_EFORMAT);
    cr_assert(strstr(collect_last_error(), "other.csv:1: not the header row"), "%s", collect_last_error());
    remove(path);
    free(path);
    cr_assert_eq(collect_gemm_measured_read("no/such/table.csv.gz", &m, &n), COLLECT_EIO);
    cr_assert(strstr(collect_last_error(), "no/such/table.csv.gz"), "%s", collect_last_error());
}

/* A plain-text table file `name`: header's columns, a family column joined after them (as table_groups.py joins
 * it), then `rows` (each ending in its newline). Its path, test_tmpfile's. */
static char *table_with_family(const char *name, const char *header, const char *rows)
{
    char text[2048];
    snprintf(text, sizeof text, "%.*s,family\n%s", (int)strcspn(header, "\n"), header, rows);
    return test_tmpfile(name, text, strlen(text));
}

/* A table without the batch column, with a group column after it, reads as single GEMMs. */
Test(collect_gemm_read, a_table_without_the_batch_column_reads_as_batch_1)
{
    char *path = table_with_family("old.csv", collect_gemm_csv_header_unbatched(),
                                   "64,128,256,bf16,N,T,66,128,256,64,3,1,0,0,0,0,0,0,12.5,0,4096,llama3\n"
                                   "7,9,11,fp32,T,N,66,128,256,64,3,2,1,0,0,0,0,0,13.5,,0,vit\n");
    collect_gemm_measured *m;
    int n;
    cr_assert_eq(collect_gemm_measured_read(path, &m, &n), 0, "%s", collect_last_error());
    cr_assert_eq(n, 2);
    cr_assert(m[0].s.batch == 1 && m[1].s.batch == 1);
    cr_assert(m[1].s.m == 7 && m[1].s.trans_a == 'T' && m[1].rows[0].cfg.split_k == 2);
    cr_assert_float_eq(m[0].rows[0].time_us, 12.5, 1e-12);
    cr_assert_eq(m[0].rows[0].workspace, 4096);
    char key[128];
    cr_assert_eq(collect_gemm_shape_key(&m[0].s, key, sizeof key), 0);
    cr_assert_str_eq(key, "64,128,256,bf16,N,T");
    collect_gemm_measured_free(m, n);
    remove(path);
    free(path);
}

/* A table with a column joined after the collector's (a problem's group, collect/scripts/table_groups.py) reads as
 * the collector wrote it; each row then needs the header's field count. */
Test(collect_gemm_read, extra_columns_after_the_collectors_are_skipped)
{
    char *path = table_with_family("family.csv", collect_gemm_csv_header(),
                                   "64,128,256,bf16,N,T,1,66,128,256,64,3,1,0,0,0,0,0,0,12.5,0,4096,llama3\n"
                                   "64,128,256,bf16,N,T,1,66,128,256,64,3,2,1,0,0,0,0,0,13.5,,0,llama3\n");
    collect_gemm_measured *m;
    int n;
    cr_assert_eq(collect_gemm_measured_read(path, &m, &n), 0, "%s", collect_last_error());
    cr_assert_eq(n, 1);
    cr_assert_eq(m[0].n, 2);
    cr_assert_float_eq(m[0].rows[0].time_us, 12.5, 1e-12);
    cr_assert_eq(m[0].rows[0].workspace, 4096, "the last collector column, not the family after it");
    cr_assert_eq(m[0].rows[1].heuristic_rank, -1);
    collect_gemm_measured_free(m, n);
    remove(path);
    free(path);
    /* a row without the extra field is short of the header's count */
    path = table_with_family("short.csv", collect_gemm_csv_header(),
                             "64,128,256,bf16,N,T,1,66,128,256,64,3,1,0,0,0,0,0,0,12.5,0,4096\n");
    cr_assert_eq(collect_gemm_measured_read(path, &m, &n), COLLECT_EFORMAT);
    cr_assert(strstr(collect_last_error(), ":2: expected 23"), "%s", collect_last_error());
    remove(path);
    free(path);
    /* a header that only starts like the collector's is another table's */
    char text[2048];
    snprintf(text, sizeof text, "%.*sx\n", (int)strcspn(collect_gemm_csv_header(), "\n"), collect_gemm_csv_header());
    path = test_tmpfile("other.csv", text, strlen(text));
    cr_assert_eq(collect_gemm_measured_read(path, &m, &n), COLLECT_EFORMAT);
    remove(path);
    free(path);
}

Test(collect_gemm_read, categorical_columns_as_the_schema_lists_them)
{
    cr_assert(collect_gemm_is_categorical("dtype"));
    cr_assert(collect_gemm_is_categorical("algo_id"));
    cr_assert(collect_gemm_is_categorical("inner_shape"));
    cr_assert_not(collect_gemm_is_categorical("tile_m"));
    cr_assert_not(collect_gemm_is_categorical("M"));
}

/* A stand-in for an exported runtime: kernel columns in another order than the table's, and vocabularies. */
static const char *fake_problem_column(int j)
{
    static const char *const c[] = {"trans_b", "M", "dtype", "K", "N", "trans_a"};
    return c[j];
}
static const char *fake_kernel_column(int j)
{
    static const char *const c[] = {"split_k", "algo_id", "tile_n", "inner_shape"};
    return c[j];
}
static const char *fake_ranked_column(int j)
{
    static const char *const c[] = {"split_k", "vendor_rank"};
    return c[j];
}
static double fake_category(const char *column, const char *value)
{
    if (!strcmp(column, "dtype")) return !strcmp(value, "bf16") ? 0 : !strcmp(value, "fp32") ? 2 : -1;
    if (!strcmp(column, "trans_a") || !strcmp(column, "trans_b")) return value[0] == 'T';
    if (!strcmp(column, "algo_id")) return !strcmp(value, "66") ? 5 : !strcmp(value, "6") ? 1 : -1;
    if (!strcmp(column, "inner_shape")) return atoi(value) + 10;
    return -1;
}

Test(collect_gemm_read, model_values_in_the_model_column_order)
{
    collect_gemm_model_api api = {6, 4, fake_problem_column, fake_kernel_column, fake_category};
    collect_gemm_row r[2];
    rows_make(r);
    collect_gemm_config cfg[2] = {r[0].cfg, r[1].cfg};
    double pv[6], kv[8];
    cr_assert_eq(collect_gemm_model_values(&api, &shape_a, cfg, NULL, 2, pv, kv), 0, "%s", collect_last_error());
    double epv[6] = {1, 64, 0, 256, 128, 0};
    for (int j = 0; j < 6; j++) cr_assert_eq(pv[j], epv[j], "pv[%d] = %g", j, pv[j]);
    /* r[0]: algo 66, tile 128x256, split 1, inner 0; r[1]: algo 6, tile 128x128, split 2, inner 4 */
    double ekv[8] = {1, 5, 256, 10, 2, 1, 128, 14};
    for (int j = 0; j < 8; j++) cr_assert_eq(kv[j], ekv[j], "kv[%d] = %g", j, kv[j]);
    cr_assert_eq(collect_gemm_model_values(&api, &shape_b, cfg, NULL, 0, pv, kv), 0);
    cr_assert_eq(pv[2], 2, "fp32");
    cr_assert_eq(pv[0], 0, "trans_b N");
    /* a runtime whose first kernel column is "trans_b": not a kernel column of the gemm table */
    collect_gemm_model_api wrong = {6, 1, fake_problem_column, fake_problem_column, fake_category};
    cr_assert_eq(collect_gemm_model_values(&wrong, &shape_a, cfg, NULL, 1, pv, kv), COLLECT_EINVAL);
    cr_assert(strstr(collect_last_error(), "'trans_b'"), "%s", collect_last_error());
    /* a model that reads cuBLASLt's rank of each candidate */
    collect_gemm_model_api ranked = {6, 2, fake_problem_column, fake_ranked_column, fake_category};
    cr_assert_eq(collect_gemm_model_values(&ranked, &shape_a, cfg, NULL, 2, pv, kv), COLLECT_EINVAL, "ranks needed");
    cr_assert(strstr(collect_last_error(), "vendor_rank"), "%s", collect_last_error());
    int rank[2] = {3, -1};
    cr_assert_eq(collect_gemm_model_values(&ranked, &shape_a, cfg, rank, 2, pv, kv), 0, "%s", collect_last_error());
    cr_assert(kv[0] == 1 && kv[1] == 3 && kv[2] == 2 && kv[3] == COLLECT_GEMM_UNLISTED, "%g %g %g %g", kv[0], kv[1],
              kv[2], kv[3]);
}

/* A model trained on a table with the batch column reads it as a number; fp8e4m3 goes through its vocabulary. */
static const char *batched_problem_column(int j)
{
    static const char *const c[] = {"M", "batch", "dtype"};
    return c[j];
}

Test(collect_gemm_read, model_values_read_the_batch)
{
    collect_gemm_model_api api = {3, 4, batched_problem_column, fake_kernel_column, fake_category};
    collect_gemm_row r[2];
    rows_make(r);
    collect_gemm_config cfg[1] = {r[0].cfg};
    collect_gemm_shape s = shape_a;
    s.batch = 96;
    double pv[3], kv[4];
    cr_assert_eq(collect_gemm_model_values(&api, &s, cfg, NULL, 1, pv, kv), 0, "%s", collect_last_error());
    cr_assert(pv[0] == 64 && pv[1] == 96 && pv[2] == 0, "%g %g %g", pv[0], pv[1], pv[2]);
    s.batch = 1;
    s.dtype = COLLECT_GEMM_FP8E4M3;
    cr_assert_eq(collect_gemm_model_values(&api, &s, cfg, NULL, 1, pv, kv), 0, "%s", collect_last_error());
    cr_assert(pv[1] == 1 && pv[2] == -1, "a single GEMM, a data type the vocabulary lacks: %g %g", pv[1], pv[2]);
}

static cJSON *json_read(const char *path)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f);
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    cJSON *j = cJSON_Parse(buf);
    cr_assert_not_null(j, "invalid JSON: %s", buf);
    return j;
}

Test(collect_gemm_json, schema_and_sidecar_names)
{
    char p[256];
    cr_assert_eq(collect_gemm_sidecar_path("out/h100_cublaslt_gemm.csv.gz", ".schema.json", p, sizeof p), 0);
    cr_assert_str_eq(p, "out/h100_cublaslt_gemm.schema.json");
    cr_assert_eq(collect_gemm_sidecar_path("t.csv", ".caps.json", p, sizeof p), 0);
    cr_assert_str_eq(p, "t.caps.json");
    char *path = test_tmppath(".schema.json");
    cr_assert_eq(collect_gemm_schema_write(path, 132), 0, "%s", collect_last_error());
    cJSON *j = json_read(path);
    cJSON *problem = cJSON_GetObjectItem(j, "problem");
    cr_assert_eq(cJSON_GetArraySize(problem), 7);
    cr_assert_str_eq(cJSON_GetArrayItem(problem, 6)->valuestring, "batch");
    cJSON *kernel = cJSON_GetObjectItem(j, "kernel");
    cr_assert_eq(cJSON_GetArraySize(kernel), COLLECT_GEMM_N_FIELDS);
    cr_assert_str_eq(cJSON_GetArrayItem(kernel, 1)->valuestring, "tile_m");
    cr_assert_str_eq(cJSON_GetObjectItem(j, "measure")->valuestring, "time_us");
    cr_assert_str_eq(cJSON_GetObjectItem(j, "vendor")->valuestring, "heuristic_rank");
    cr_assert_str_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "tiles"), "tile_n")->valuestring, "N");
    cr_assert_eq(cJSON_GetObjectItem(j, "cus")->valueint, 132);
    /* every schema column is a header column */
    const char *hdr = collect_gemm_csv_header();
    for (int i = 0; i < COLLECT_GEMM_N_FIELDS; i++) cr_assert(strstr(hdr, cJSON_GetArrayItem(kernel, i)->valuestring));
    cJSON_Delete(j);
    remove(path);
    free(path);
}

Test(collect_gemm_json, capabilities)
{
    int tiles[3] = {20, 23, 0}, stages[2] = {15, 35};
    collect_gemm_caps c[2];
    memset(c, 0, sizeof c);
    c[0] = (collect_gemm_caps){.algo_id = 66, .n_tiles = 3, .n_stages = 2, .tiles = tiles, .stages = stages,
                               .splitk_support = 1, .reduction_mask = 6, .swizzle_support = 1, .custom_option_max = 2,
                               .numerical_impl_flags = 0x100000001ull, .min_align = {16, 16, 4, 4}};
    c[1] = (collect_gemm_caps){.algo_id = 0};
    collect_gemm_capset sets[2] = {{COLLECT_GEMM_BF16, 2, c}, {COLLECT_GEMM_TF32, 0, NULL}};
    char *path = test_tmppath(".caps.json");
    cr_assert_eq(collect_gemm_caps_write(path, "NVIDIA \"H100\"", 130100, sets, 2), 0, "%s", collect_last_error());
    cJSON *j = json_read(path);
    cr_assert_str_eq(cJSON_GetObjectItem(j, "gpu")->valuestring, "NVIDIA \"H100\"");
    cJSON *types = cJSON_GetObjectItem(j, "types");
    cr_assert_eq(cJSON_GetArraySize(types), 2);
    cJSON *bf16 = cJSON_GetArrayItem(types, 0);
    cr_assert_str_eq(cJSON_GetObjectItem(bf16, "dtype")->valuestring, "bf16");
    cJSON *a0 = cJSON_GetArrayItem(cJSON_GetObjectItem(bf16, "algos"), 0);
    cr_assert_eq(cJSON_GetObjectItem(a0, "algo_id")->valueint, 66);
    cJSON *t1 = cJSON_GetArrayItem(cJSON_GetObjectItem(a0, "tiles"), 1);
    cr_assert(cJSON_GetArrayItem(t1, 0)->valueint == 128 && cJSON_GetArrayItem(t1, 1)->valueint == 256);
    cJSON *s1 = cJSON_GetArrayItem(cJSON_GetObjectItem(a0, "stages"), 1);
    cr_assert(cJSON_GetArrayItem(s1, 0)->valueint == 64 && cJSON_GetArrayItem(s1, 1)->valueint == 0);
    cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(a0, "reduction_schemes")), 2);
    cr_assert_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(a0, "min_alignment_bytes"), "A")->valueint, 16);
    cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(cJSON_GetArrayItem(types, 1), "algos")), 0);
    cJSON_Delete(j);
    remove(path);
    free(path);
}

Test(collect_gemm_draw, sample_plan_draws_neighbours_of_kept_entries_only)
{
    int bases, near_end, target;
    /* a list whose every entry was dropped (ids gemm_enums.c does not know): no base, no neighbour draw */
    collect_gemm_sample_plan(0, 64, 1024, &bases, &near_end, &target);
    cr_assert_eq(bases, 0);
    cr_assert_eq(near_end, 0, "neighbour draws with no entry of the shape's list to start from");
    cr_assert_eq(target, 64);
    collect_gemm_sample_plan(3, 64, 1024, &bases, &near_end, &target);
    cr_assert(bases == 3 && near_end == 35 && target == 67, "%d %d %d", bases, near_end, target);
    collect_gemm_sample_plan(10, 64, 1024, &bases, &near_end, &target);
    cr_assert(bases == 4 && near_end == 42 && target == 74, "%d %d %d", bases, near_end, target);
    collect_gemm_sample_plan(10, 100, 50, &bases, &near_end, &target);
    cr_assert(near_end == 50 && target == 50, "both at most max: %d %d", near_end, target);
}

Test(collect_gemm_draw, seeded_and_within_capabilities)
{
    int tiles[2] = {20, 23}, stages[3] = {13, 15, 35};
    collect_gemm_caps cap = {.algo_id = 66, .n_tiles = 2, .n_stages = 3, .tiles = tiles, .stages = stages,
                             .splitk_support = 1, .reduction_mask = 1, .swizzle_support = 1, .custom_option_max = 3};
    collect_gemm_rng r1, r2, r3, r4;
    collect_gemm_rng_seed(&r1, 7, "64,128,256,bf16,N,T");
    collect_gemm_rng_seed(&r2, 7, "64,128,256,bf16,N,T");
    collect_gemm_rng_seed(&r3, 8, "64,128,256,bf16,N,T");
    collect_gemm_rng_seed(&r4, 9, "neighbours");
    int differ = 0, split = 0;
    for (int i = 0; i < 200; i++) {
        collect_gemm_config a, b, c;
        collect_gemm_config_draw(&cap, 256, &r1, &a);
        collect_gemm_config_draw(&cap, 256, &r2, &b);
        collect_gemm_config_draw(&cap, 256, &r3, &c);
        cr_assert(collect_gemm_config_equal(&a, &b), "same seed and key, same draws");
        differ += !collect_gemm_config_equal(&a, &c);
        cr_assert(a.tile_id == 20 || a.tile_id == 23);
        cr_assert(a.stages_id == 13 || a.stages_id == 15 || a.stages_id == 35);
        cr_assert(a.split_k >= 1 && 256 / a.split_k >= 32, "split %d leaves < 32 of K", a.split_k);
        cr_assert_eq(a.reduction_scheme, a.split_k > 1 ? 1 : 0);
        cr_assert(a.custom_option >= 0 && a.custom_option <= 3);
        split += a.split_k > 1;
        collect_gemm_config n;
        collect_gemm_config_neighbour(&cap, 256, &a, &r4, &n);
        int changed = (n.tile_id != a.tile_id) + (n.stages_id != a.stages_id) + (n.split_k != a.split_k) +
                      (n.swizzle != a.swizzle) + (n.custom_option != a.custom_option) + (n.cluster_id != a.cluster_id);
        cr_assert_leq(changed, 2, "a neighbour changes one field (split-K with its reduction scheme)");
    }
    cr_assert_gt(differ, 100, "another seed draws differently");
    cr_assert_gt(split, 20);
    collect_gemm_config a;
    cap.splitk_support = 0;
    for (int i = 0; i < 50; i++) {
        collect_gemm_config_draw(&cap, 4096, &r1, &a);
        cr_assert_eq(a.split_k, 1, "no split without support");
    }
}
