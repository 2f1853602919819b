/* test_format.c - the .mpg format: every rule, accepted and refused. */
#include "helpers.h"
#include <unistd.h>

#define HDR "memplan-graph 1\n"

typedef struct bad_case {
    const char *text;
    int line;
    const char *fragment;
} bad_case;

static void expect_bad(const bad_case *c) {
    mp_err err;
    mp_program *p = mp_graph_parse(c->text, strlen(c->text), "bad.mpg", &err);
    cr_assert(p == NULL, "accepted a bad graph:\n%s", c->text);
    cr_assert_eq(err.code, MP_EFORMAT);
    char want[64];
    snprintf(want, sizeof want, "bad.mpg:%d: ", c->line);
    cr_assert(strncmp(err.msg, want, strlen(want)) == 0,
              "message '%s' does not start with '%s' for\n%s", err.msg, want,
              c->text);
    cr_assert(strstr(err.msg, c->fragment) != NULL,
              "message '%s' lacks '%s' for\n%s", err.msg, c->fragment, c->text);
}

#define G1(body) HDR "graph g\n" body "end\n"
/* Graph g (x, y, then the lines under test, which define y) with the
 * sub-graphs s (one operand, one result) and two (two and two). */
#define BIND(lines)                                                                    \
    HDR "graph g\ntensor x 4\ntensor y 4\nnode placeholder out=x\n" lines      \
        "node output in=x\nend\n"                                                       \
        "graph s\ntensor a 4\nnode placeholder out=a\nnode output in=a\nend\n"              \
        "graph two\ntensor a 4\ntensor b 4\nnode placeholder out=a\nnode placeholder out=b\n" \
        "node output in=a,b\nend\n"
#define SIMPLE "tensor x 4\nnode placeholder out=x\nnode output in=x\n"

static const bad_case bad_cases[] = {
    {"", 1, "empty file"},
    {"# nothing\n\n", 2, "empty file"},
    {"memplan-graph 2\n", 1, "unsupported graph format version"},
    {"memplan-graph 1 extra\n", 1, "unsupported"},
    {"graph g\nend\n", 1, "expected 'memplan-graph 1' header"},
    {HDR, 1, "no graph"},
    {HDR "graph g\n" SIMPLE, 5, "not closed"},
    {HDR "graph g\ngraph h\n", 3, "graph opened inside graph 'g'"},
    {HDR "tensor x 4\n", 2, "'tensor' outside a graph"},
    {HDR "node output\n", 2, "'node' outside a graph"},
    {HDR "end\n", 2, "'end' outside a graph"},
    {HDR "bogus\n", 2, "unknown keyword 'bogus'"},
    {HDR "graph\n", 2, "graph line needs exactly one name"},
    {HDR "graph a b\n", 2, "graph line needs exactly one name"},
    {HDR "graph a/b\n", 2, "invalid character in graph name 'a/b'"},
    {G1(SIMPLE) "graph g\n" SIMPLE "end\n", 7, "graph 'g' is already defined at line 2"},
    {G1("tensor x\n"), 3, "tensor line needs a name and a size"},
    {G1("tensor x -1\n"), 3, "bad size '-1'"},
    {G1("tensor x 4611686018427387904\n"), 3, "below 2^62"},
    {G1("tensor x 99999999999999999999999\n"), 3, "bad size"},
    {G1("tensor x 1e3\n"), 3, "bad size '1e3'"},
    {G1("tensor x 4\ntensor x 8\n"), 4, "tensor 'x' is already declared at line 3"},
    /* names reach the map at the next lookup (add_names): an error on a
     * later line, before one, still yields to the earlier duplicate */
    {G1("tensor x 4\ntensor x 8\ntensor y z\n"), 4, "tensor 'x' is already declared at line 3"},
    {G1("tensor x 4\ntensor x 8\nnode bogus\n"), 4, "tensor 'x' is already declared at line 3"},
    {G1("tensor x 4\ntensor x 8\ngraph h\n"), 4, "tensor 'x' is already declared at line 3"},
    {G1("tensor x 4\ntensor y 4\ntensor y 4\ntensor x 4\n"), 5, "tensor 'y' is already declared at line 4"},
    {G1("tensor x@ 4\n"), 3, "invalid character in tensor name"},
    {G1("tensor x 4 device=gpu\n"), 3, "bad device 'gpu'"},
    {G1("tensor x 4 device=cuda:\n"), 3, "bad device"},
    {G1("tensor x 4 device=cuda:-1\n"), 3, "bad device"},
    {G1("tensor x 4 device=cuda:99999999\n"), 3, "bad device"},
    {G1("tensor x 4 device\n"), 3, "needs a value"},
    {G1("tensor x 4 const=1\n"), 3, "takes no value"},
    {G1("tensor x 4 const const\n"), 3, "given twice"},
    {G1("tensor x 4 mem_id=0\n"), 3, "bad mem_id '0'"},
    {G1("tensor x 4 mem_id=x\n"), 3, "bad mem_id"},
    {G1("tensor x 4 mem_id=100000\n"), 3, "bad mem_id"},
    {G1("tensor x 4 shiny\n"), 3, "unknown tensor attribute 'shiny'"},
    {G1("tensor x 4 view=\n"), 3, "empty view base name"},
    {G1("node\n"), 3, "node line needs a kind"},
    {G1("node frob\n"), 3, "unknown node kind 'frob'"},
    {G1("node call in=y\n"), 3, "in= names tensor 'y', which is not declared"},
    {G1("tensor x 4\nnode call in=x,,x\n"), 4, "empty name in in= list"},
    {G1("tensor x 4\nnode call in=x,\n"), 4, "empty name in in= list"},
    {G1("tensor x 4\nnode call in=x in=x\n"), 4, "given twice"},
    {G1("tensor x 4\nnode call inn=x\n"), 4, "unknown attribute 'inn' for a call node"},
    {G1("tensor x 4\nnode call x\n"), 4, "needs key=value"},
    {G1("tensor x 4\nnode placeholder\n"), 4, "placeholder needs exactly one out="},
    {G1("tensor x 4\ntensor y 4\nnode placeholder out=x,y\n"), 5, "exactly one out="},
    {G1("tensor x 4\nnode placeholder out=x in=x\n"), 4, "placeholder takes no in="},
    {G1("tensor x 4\ntensor y 4\nnode call out=y\nnode placeholder out=x\n"), 6,
     "placeholder after a non-placeholder"},
    {G1("tensor x 4\ntensor y 4\nnode call out=x,x\n"), 5, "appears twice in out="},
    {G1("tensor x 4\nnode call out=x\nnode call out=x\n"), 5,
     "already in the out= of the node at line 4"},
    {G1("tensor x 4\nnode placeholder out=x\nnode output in=x out=x\n"), 5,
     "output node takes no out="},
    {G1(SIMPLE "node call in=x\n"), 6, "node after the output node"},
    {G1(SIMPLE "node output in=x\n"), 6, "node after the output node"},
    {G1("tensor x 4\nnode placeholder out=x\n"), 5, "graph 'g' has no output node"},
    {G1("tensor x 4\ntensor y 4\nnode placeholder out=x\nnode output in=x\n"), 4,
     "tensor 'y' is not in the out= of any node"},
    {G1("tensor x 4 mutable\ntensor y 4\nnode placeholder out=y\nnode call out=x\nnode output in=y\n"),
     3, "mutable tensor 'x' is not defined by a placeholder"},
    {G1("tensor x 4\ntensor v 4 view=q\nnode placeholder out=x\nnode output in=x\n"), 4,
     "view base 'q' of tensor 'v' is not a tensor of graph 'g'"},
    {G1("tensor x 4 inplace=q\nnode placeholder out=x\nnode output in=x\n"), 3,
     "inplace base 'q'"},
    {G1("tensor a 4 view=b\ntensor b 4 view=a\ntensor x 4\nnode placeholder out=x\nnode output in=x\n"),
     3, "view cycle"},
    {G1("tensor x 4\ntensor v 4 view=x\nnode placeholder out=v\n"), 5, "placeholder cannot define view"},
    {G1("tensor x 4\nnode delegate out=x\n"), 4, "delegate node needs backend=NAME"},
    {G1("tensor x 4\nnode call out=x backend=xnnpack\n"), 4, "backend= is only for delegate"},
    {G1("tensor x 4\nnode cond out=x true=g\n"), 4, "cond node needs false=GRAPH"},
    {G1("tensor x 4\nnode while out=x body=g\n"), 4, "while node needs cond=GRAPH"},
    {G1("tensor x 4\nnode map out=x\n"), 4, "map node needs body=GRAPH"},
    {G1("tensor x 4\nnode scan out=x\n"), 4, "scan node needs body=GRAPH"},
    {G1("tensor x 4\nnode call out=x body=g\n"), 4, "unknown attribute 'body' for a call node"},
    {G1("tensor x 4\nnode map out=x body=g true=g\n"), 4, "unknown attribute 'true'"},
    {G1("tensor x 4\nnode placeholder out=x\nnode map in=x body=nope\nnode output in=x\n"), 5,
     "graph 'nope' is not defined in this file"},
    {HDR "graph g\ntensor x 4\nnode placeholder out=x\nnode map in=x body=h\nnode output in=x\nend\n"
         "graph h\ntensor y 4\nnode placeholder out=y\nnode cond in=y true=g false=h\nnode output in=y\nend\n",
     11, "reaches itself"},
    {G1("tensor x 4\nnode placeholder out=x\nnode map in=x body=g\nnode output in=x\n"), 5,
     "graph 'g' reaches itself"},
    /* operands bind to sub-graphs positionally (docs/formats.md) */
    {BIND("node cond out=y true=s false=s\n"), 6, "cond needs its predicate as its first input"},
    {BIND("node cond in=x out=y true=s false=s\n"), 6,
     "cond passes 0 operands after its predicate to its true graph 's', which has 1 placeholder"},
    {BIND("node cond in=x,x,x out=y true=s false=s\n"), 6,
     "cond passes 2 operands after its predicate to its true graph 's', which has 1 placeholder"},
    {BIND("node cond in=x,x out=y true=s false=two\n"), 6,
     "cond passes 1 operand after its predicate to its false graph 'two', which has 2 placeholders"},
    {BIND("node cond in=x,x true=s false=s\nnode call out=y\n"), 6,
     "cond's true graph 's' returns 1 value where 0 are expected"},
    {BIND("tensor z 4\nnode while in=x out=y,z cond=s body=s\n"), 7,
     "while has 2 outputs but 1 inputs: its outputs are the final values of its first inputs"},
    {BIND("node while in=x,x out=y cond=two body=two\n"), 6,
     "while's cond graph 'two' returns 2 values where 1 is expected"},
    {BIND("node while in=x out=y cond=s body=two\n"), 6,
     "while passes 1 operand to its body graph 'two', which has 2 placeholders"},
    {BIND("node map out=y body=s\n"), 6, "map needs at least one input to map over"},
    {BIND("node map in=x,x out=y body=s\n"), 6,
     "map passes 2 operands to its body graph 's', which has 1 placeholder"},
    {BIND("node scan in=x,x out=y body=two\n"), 6,
     "scan's body graph 'two' returns 2 values where 1 is expected"},
    {G1("tensor x 4\0\n"), 3, "NUL byte"},
    {G1("tensor x 4\nnode placeholder out=x op=\n"), 4, "empty operator name"},
    {G1("tensor x 4\nnode placeholder out=x op=a\"b\n"), 4, "invalid character in operator name"},
    {G1("tensor x 4\nnode placeholder out=x op=a op=b\n"), 4, "node attribute 'op' given twice"},
    {G1("tensor a 1 b c d e f g h i j k l m n o p q r s t u v w x y z 1 2 3 4 5 6 7\n"), 3,
     "too many fields"},
    /* scratch= (delegate working memory) */
    {G1("tensor x 4\nnode placeholder out=x\nnode call in=x scratch=64\nnode output\n"), 5,
     "scratch= is only for delegate nodes"},
    {G1("tensor x 4\nnode placeholder out=x\nnode delegate in=x backend=q scratch=0\nnode output\n"), 5,
     "bad scratch= '0'"},
    {G1("tensor x 4\nnode placeholder out=x\nnode delegate in=x backend=q scratch=4611686018427387904\n"
        "node output\n"), 5, "bad scratch="},
    {G1("tensor x 4\nnode placeholder out=x\nnode delegate in=x backend=q scratch=8 scratch=8\nnode output\n"),
     5, "node attribute 'scratch' given twice"},
    {G1("tensor x 4\ntensor scratch.1 4\nnode placeholder out=x\nnode delegate in=x out=scratch.1 backend=q "
        "scratch=8\nnode output\n"), 6, "scratch= makes tensor 'scratch.1', but a tensor of that name is declared "
        "at line 4"},
    /* span= (time units a node stands for) */
    {G1("tensor x 4\nnode placeholder out=x span=0\nnode output in=x\n"), 4, "bad span= '0'"},
    {G1("tensor x 4\nnode placeholder out=x span=1073741825\nnode output in=x\n"), 4,
     "want time units: a decimal from 1 to 2^30"},
    {G1("tensor x 4\nnode placeholder out=x span=2x\nnode output in=x\n"), 4, "bad span= '2x'"},
    {G1("tensor x 4\nnode placeholder out=x span=2 span=3\nnode output in=x\n"), 4,
     "node attribute 'span' given twice"},
    /* at= (pinned offsets) */
    {G1("tensor x 4 at=\nnode placeholder out=x\nnode output in=x\n"), 3, "bad at ''"},
    {G1("tensor x 4 at=-1\nnode placeholder out=x\nnode output in=x\n"), 3, "bad at '-1'"},
    {G1("tensor x 4 at=4611686018427387904\nnode placeholder out=x\nnode output in=x\n"), 3,
     "want a byte offset below 2^62"},
    {G1("tensor x 4 at=0 at=16\nnode placeholder out=x\nnode output in=x\n"), 3,
     "tensor attribute 'at' given twice"},
    {G1("tensor x 4\ntensor y 4 inplace=x at=0\nnode placeholder out=x\nnode call in=x out=y\nnode output in=y\n"),
     4, "an in-place or view tensor lives in its base's: pin the base"},
    {G1("tensor x 4\ntensor v 4 view=x at=0\nnode placeholder out=x\nnode output in=v\n"), 4,
     "pin the base"},
    {HDR "graph g\ntensor x 4\ntensor y 4\nnode placeholder out=x\nnode map in=x body=h out=y\nnode output in=y\nend\n"
         "graph h\ntensor i 4 at=0\nnode placeholder out=i\nnode output in=i\nend\n",
     10, "at= is allowed in the entry graph only"},
};

Test(format, refused_inputs_name_file_line_and_token) {
    for (size_t i = 0; i < sizeof bad_cases / sizeof *bad_cases; i++) {
        /* the NUL case is built by hand: strlen would stop at the NUL */
        if (strstr(bad_cases[i].fragment, "NUL")) continue;
        expect_bad(&bad_cases[i]);
    }
}

Test(format, nul_byte_is_refused) {
    static const char text[] = HDR "graph g\ntensor x 4\0\n";
    mp_err err;
    cr_assert_null(mp_graph_parse(text, sizeof text - 1, "bad.mpg", &err));
    ASSERT_CONTAINS(err.msg, "bad.mpg:3: NUL byte");
}

Test(format, long_names_limit) {
    char name[300];
    memset(name, 'n', 256);
    name[256] = 0;
    char text[2048];
    snprintf(text, sizeof text, HDR "graph %s\nend\n", name);
    mp_err err;
    cr_assert_null(mp_graph_parse(text, strlen(text), "bad.mpg", &err));
    ASSERT_CONTAINS(err.msg, "longer than 255 bytes");
    name[255] = 0;
    snprintf(text, sizeof text, HDR "graph %s\ntensor %s 1\nnode placeholder out=%s\nnode output in=%s\nend\n",
             name, name, name, name);
    mp_program *p = must_parse(text);
    cr_assert_eq(strlen(p->graphs[0].tensors[0].name), 255);
    mp_program_free(p);
}

/* Every construct of the format in one file. */
static const char EVERY_FEATURE[] =
        "# leading comment\n"
        "   memplan-graph   1   # header with a comment\n"
        "\n"
        "graph main\t# the entry graph\n"
        "tensor x 100 device=cpu\n"
        "tensor w 64 const\n"
        "tensor buf 32 mutable mem_id=2\n"
        "tensor d 0 dynamic\n"
        "tensor a 200 device=cuda\n"
        "tensor b 200 device=cuda:1 inplace=later\n"
        "tensor v1 10 view=a\n"
        "tensor v2 10 view=v1\n"
        "tensor later 300\n"
        "tensor c.$-_9 5 device=cpu:3\n"
        "node placeholder out=x\n"
        "node placeholder out=w\n"
        "node placeholder out=buf\n"
        "node call in=x,w out=a,d\n"
        "node delegate in=v2 out=later backend=XnnpackBackend\n"
        "node cond in=later,later true=t false=f out=b\n"
        "node while in=b cond=t body=f out=c.$-_9\n"
        "node map in=c.$-_9 body=e\n"
        "node scan in=c.$-_9 body=e\n"
        "node call in=v1\n"
        "node output in=v2,b,buf\n"
        "end\n"
        "graph t\ntensor p 4\nnode placeholder out=p\nnode output in=p\nend\n"
        "graph f\r\ntensor p 4\r\nnode placeholder out=p\r\nnode output in=p\r\nend\r\n"
        "graph e\ntensor p 4\nnode placeholder out=p\nnode output\nend\n";

/* What the file's tensors must read as. */
static void check_feature_tensors(const mp_graphdef *g) {
    cr_assert_eq(g->tensors[1].flags, MP_T_CONST);
    cr_assert_eq(g->tensors[2].flags, MP_T_MUTABLE);
    cr_assert_eq(g->tensors[2].mem_id, 2);
    cr_assert_eq(g->tensors[3].flags, MP_T_DYNAMIC);
    cr_assert_eq(g->tensors[4].device.type, MP_DEV_CUDA);
    cr_assert_eq(g->tensors[4].device.index, 0);
    cr_assert_eq(g->tensors[5].device.index, 1);
    cr_assert_eq(g->tensors[5].inplace_base, 8, "forward in-place reference");
    cr_assert_eq(g->tensors[6].view_base, 4);
    cr_assert_eq(g->tensors[7].view_base, 6);
    cr_assert_eq(g->tensors[7].root, 4, "view of a view resolves to the root");
    cr_assert_eq(g->tensors[9].device.type, MP_DEV_CPU);
    cr_assert_eq(g->tensors[9].device.index, 3);
}

/* What the file's nodes must read as. */
static void check_feature_nodes(const mp_graphdef *g) {
    cr_assert_eq(g->nodes[4].kind, MP_NODE_DELEGATE);
    cr_assert_str_eq(g->nodes[4].backend, "XnnpackBackend");
    cr_assert_eq(g->nodes[5].sub[0], 1);
    cr_assert_eq(g->nodes[5].sub[1], 2);
    cr_assert_eq(g->nodes[6].sub[0], 1, "while cond=");
    cr_assert_eq(g->nodes[6].sub[1], 2, "while body=");
    cr_assert_eq(g->nodes[7].sub[0], 3, "map body=");
    cr_assert_eq(g->nodes[7].sub[1], -1);
    cr_assert_eq(g->tensors[8].def_node, 4);
}

Test(format, accepts_every_feature) {
    mp_program *p = must_parse(EVERY_FEATURE);
    cr_assert_eq(p->n_graphs, 4);
    const mp_graphdef *g = &p->graphs[0];
    cr_assert_str_eq(g->name, "main");
    cr_assert_eq(g->n_tensors, 10);
    cr_assert_eq(g->n_nodes, 11);
    check_feature_tensors(g);
    check_feature_nodes(g);
    cr_assert(mp_graph_has_xnnpack(g));
    cr_assert(!mp_graph_has_xnnpack(&p->graphs[1]));
    mp_program_free(p);
}

Test(format, views_may_appear_in_several_outs_and_graphs_share_names) {
    const char *text = HDR
        "graph g\ntensor x 4\ntensor v 4 view=x\nnode placeholder out=x\n"
        "node call in=x out=v\nnode call out=v\nnode output in=v\nend\n"
        "graph h\ntensor x 4\nnode placeholder out=x\nnode output in=x\nend\n";
    mp_program *p = must_parse(text);
    cr_assert_eq(p->n_graphs, 2);
    mp_program_free(p);
}

Test(format, write_then_parse_is_the_same_program) {
    const char *text = HDR
        "graph main\ntensor x 100\ntensor b 7 inplace=a device=cuda:2\ntensor a 9 mem_id=3\n"
        "tensor v 1 view=a\ntensor k 3 const dynamic\n"
        "node placeholder out=x\nnode placeholder out=k\nnode call in=x out=a\n"
        "node cond in=a,v true=s false=s out=b\nnode delegate in=b backend=qnn\nnode output in=b,v\nend\n"
        "graph s\ntensor p 4 mutable\nnode placeholder out=p\nnode output in=p\nend\n";
    mp_program *p = must_parse(text);
    mp_buf b1, b2;
    mp_buf_init(&b1);
    mp_buf_init(&b2);
    mp_graph_write(p, &b1);
    mp_program *q = must_parse(b1.data);
    mp_graph_write(q, &b2);
    cr_assert_str_eq(b1.data, b2.data);
    cr_assert_eq(q->graphs[0].tensors[1].inplace_base, 2);
    cr_assert_eq(q->graphs[0].tensors[1].device.index, 2);
    mp_buf_free(&b1);
    mp_buf_free(&b2);
    mp_program_free(p);
    mp_program_free(q);
}

Test(format, pins_survive_write_and_parse) {
    const char *text = HDR "graph main\ntensor x 100 at=4096\ntensor y 8 mem_id=2 at=0\n"
                           "node placeholder out=x\nnode call in=x out=y\nnode output in=y\nend\n";
    mp_program *p = must_parse(text);
    cr_assert(p->graphs[0].tensors[0].flags & MP_T_PINNED);
    cr_assert_eq(p->graphs[0].tensors[0].at, 4096);
    cr_assert(p->graphs[0].tensors[1].flags & MP_T_PINNED, "at=0 is a pin too");
    mp_buf b;
    mp_buf_init(&b);
    mp_graph_write(p, &b);
    cr_assert(strstr(b.data, "tensor x 100 at=4096\n"), "%s", b.data);
    cr_assert(strstr(b.data, "tensor y 8 mem_id=2 at=0\n"), "%s", b.data);
    mp_program *q = must_parse(b.data);
    cr_assert_eq(q->graphs[0].tensors[0].at, 4096);
    mp_buf_free(&b);
    mp_program_free(p);
    mp_program_free(q);
}

Test(format, spans_survive_write_and_parse) {
    const char *text = HDR "graph main\ntensor x 100\ntensor y 8\n"
                           "node placeholder out=x span=7\nnode call in=x out=y span=1\nnode output in=y\nend\n";
    mp_program *p = must_parse(text);
    cr_assert_eq(p->graphs[0].nodes[0].span, 7);
    cr_assert_eq(p->graphs[0].nodes[1].span, 1);
    cr_assert_eq(p->graphs[0].nodes[2].span, 0, "no span= is 0 (one unit)");
    mp_buf b;
    mp_buf_init(&b);
    mp_graph_write(p, &b);
    cr_assert(strstr(b.data, "node placeholder out=x span=7\n"), "%s", b.data);
    cr_assert(strstr(b.data, "node call in=x out=y\n"), "span=1 is the default, not written: %s", b.data);
    mp_program *q = must_parse(b.data);
    cr_assert_eq(q->graphs[0].nodes[0].span, 7);
    mp_buf_free(&b);
    mp_program_free(p);
    mp_program_free(q);
}

Test(format, methods_and_shared_state_survive_write_and_parse) {
    const char *text = HDR "entry a b\n"
                           "graph a\ntensor s 64 mutable shared\ntensor y 8\nnode placeholder out=s\n"
                           "node call in=s out=y\nnode output in=y\nend\n"
                           "graph b\ntensor s 64 mutable shared\nnode placeholder out=s\nnode output in=s\nend\n";
    mp_program *p = must_parse(text);
    cr_assert_eq(p->n_entries, 2);
    cr_assert_eq(p->entries[1], 1);
    cr_assert(p->graphs[1].tensors[0].flags & MP_T_SHARED);
    mp_buf b;
    mp_buf_init(&b);
    mp_graph_write(p, &b);
    cr_assert_str_eq(b.data, text);
    mp_buf_free(&b);
    mp_program_free(p);
}

Test(format, operator_names_are_kept_through_parse_and_write) {
    const char *text = HDR "graph main\ntensor x 100\ntensor y 100\n"
                           "node placeholder out=x\nnode call in=x out=y op=aten::add.Tensor\n"
                           "node output in=y\nend\n";
    mp_program *p = must_parse(text);
    cr_assert_null(p->graphs[0].nodes[0].op);
    cr_assert_str_eq(p->graphs[0].nodes[1].op, "aten::add.Tensor");
    mp_buf b1;
    mp_buf_init(&b1);
    mp_graph_write(p, &b1);
    cr_assert(strstr(b1.data, "node call op=aten::add.Tensor in=x out=y\n"), "%s", b1.data);
    cr_assert_null(strstr(b1.data, "node placeholder op"), "%s", b1.data);
    mp_program *q = must_parse(b1.data);
    cr_assert_str_eq(q->graphs[0].nodes[1].op, "aten::add.Tensor");
    mp_buf_free(&b1);
    mp_program_free(p);
    mp_program_free(q);
}

/* scratch=: a tensor of its own after the declared ones, the node's last
 * output, live at that node alone; written back as scratch=, so the text
 * round-trips; a plan gives its bytes to a tensor dead there. */
Test(format, delegate_scratch_is_a_tensor_of_its_node) {
    const char *text = HDR "graph main\ntensor x 1024\ntensor a 4096\ntensor b 4096 device=cuda:1\n"
                           "node placeholder out=x\nnode call in=x out=a\n"
                           "node delegate in=a out=b backend=qnn scratch=8192\ntensor c 1024\n"
                           "node call in=b out=c\nnode output in=c\nend\n";
    mp_program *p = must_parse(text);
    const mp_graphdef *g = &p->graphs[0];
    cr_assert_eq(g->n_tensors, 5);
    const mp_tensor *t = &g->tensors[4];
    cr_assert_str_eq(t->name, "scratch.2");
    cr_assert_eq(t->size, 8192);
    cr_assert_eq(t->flags, MP_T_SCRATCH);
    cr_assert_eq(t->def_node, 2);
    cr_assert_eq(t->device.type, MP_DEV_CUDA); /* its node's first output's */
    cr_assert_eq(t->device.index, 1);
    cr_assert_eq(g->nodes[2].n_out, 2);
    cr_assert_eq(g->nodes[2].out[1], 4);
    mp_buf b1, b2;
    mp_buf_init(&b1);
    mp_buf_init(&b2);
    mp_graph_write(p, &b1);
    cr_assert(strstr(b1.data, "node delegate in=a out=b backend=qnn scratch=8192\n"), "%s", b1.data);
    cr_assert_null(strstr(b1.data, "tensor scratch"), "%s", b1.data);
    mp_program *q = must_parse(b1.data);
    mp_graph_write(q, &b2);
    cr_assert_str_eq(b1.data, b2.data);
    mp_buf_free(&b1);
    mp_buf_free(&b2);
    mp_program_free(p);
    mp_program_free(q);
}

Test(format, a_million_tensors_parse) {
    /* linear parsing: one million tensors in a chain */
    const size_t n = 1000000;
    mp_buf b;
    mp_buf_init(&b);
    mp_buf_puts(&b, HDR "graph big\n");
    for (size_t i = 0; i < n; i++) mp_buf_printf(&b, "tensor t%zu %zu\n", i, i % 4096);
    mp_buf_puts(&b, "node placeholder out=t0\n");
    for (size_t i = 1; i < n; i++) mp_buf_printf(&b, "node call in=t%zu out=t%zu\n", i - 1, i);
    mp_buf_printf(&b, "node output in=t%zu\nend\n", n - 1);
    mp_err err;
    mp_program *p = mp_graph_parse(b.data, b.len, "big.mpg", &err);
    cr_assert(p != NULL, "%s", err.msg);
    cr_assert_eq(p->graphs[0].n_tensors, n);
    mp_program_free(p);
    mp_buf_free(&b);
}

/* A graph large enough that its names go into the map in one sweep by
 * hash (mp_strmap_put_all): of three names declared twice, the one whose
 * second declaration comes first is reported, even after a later error. */
Test(format, the_first_duplicate_of_many_names_is_reported) {
    mp_buf b;
    mp_buf_init(&b);
    mp_buf_puts(&b, HDR "graph g\n");
    for (int i = 0; i < 20000; i++) {
        int name = i == 15000 ? 4000 : i == 12000 ? 9000 : i == 17000 ? 100 : i;
        mp_buf_printf(&b, "tensor t%d 4\n", name);
    }
    mp_buf_puts(&b, "tensor bad size\nend\n");
    bad_case c = {b.data, 12000 + 3, "tensor 't9000' is already declared at line 9003"};
    expect_bad(&c);
    mp_buf_free(&b);
}

/* Plan lines name tensors in any order: the parser looks a few tensors
 * past the last one first and falls back to a map of every name; both
 * must find the same tensors (names in graph order, reversed, and 40
 * apart, past the look-ahead). */
Test(format, plan_names_resolve_in_any_order) {
    mp_buf g;
    mp_buf_init(&g);
    mp_buf_puts(&g, "memplan-graph 1\ngraph main\n");
    for (int i = 0; i < 100; i++) mp_buf_printf(&g, "tensor t%d 16\n", i);
    for (int i = 0; i < 100; i++) mp_buf_printf(&g, "node placeholder out=t%d\n", i);
    mp_buf_puts(&g, "node output in=t0\nend\n");
    mp_err err;
    mp_program *p = mp_graph_parse(g.data, g.len, "g.mpg", &err);
    cr_assert_not_null(p, "%s", err.msg);
    static const int steps[3] = {1, -1, 41};
    for (int k = 0; k < 3; k++) {
        mp_buf t;
        mp_buf_init(&t);
        mp_buf_puts(&t, "memplan-plan 1\noptions alignment=16 alloc_inputs=1 alloc_outputs=1 alloc_mutable=1 "
                        "per_device=0 algo=opt\ngraph main\nbuffers 0 1600\ndevices cpu:0 cpu:0\n");
        for (int q = 0, i = steps[k] < 0 ? 99 : 0; q < 100; q++, i = (i + steps[k] + 100) % 100)
            mp_buf_printf(&t, "alloc t%d mem_id=1 obj=%d offset=%d size=16 life=0,0\n", i, i, 16 * i);
        mp_buf_puts(&t, "end\n");
        mp_plan *plan = mp_plan_parse(t.data, t.len, "p.mpp", p, &err);
        cr_assert_not_null(plan, "step %d: %s", steps[k], err.msg);
        cr_assert_eq(plan->graphs[0].n_allocs, 100);
        for (uint32_t a = 0; a < 100; a++) {
            const mp_alloc *al = &plan->graphs[0].allocs[a];
            cr_assert_eq(al->tensor, (int32_t)(al->offset / 16), "step %d: %s resolved to %d", steps[k],
                         al->name, al->tensor);
        }
        mp_plan_free(plan);
        mp_buf_free(&t);
    }
    mp_program_free(p);
    mp_buf_free(&g);
}

/* Graph blocks name graphs in any order: the parser tries the graph after
 * the last block's first and falls back to a map of every graph name;
 * both must find the same graphs (blocks in graph order, reversed, and
 * 3 apart).  A block naming no graph of the program gets -1. */
Test(format, plan_blocks_resolve_graphs_in_any_order) {
    mp_buf g;
    mp_buf_init(&g);
    mp_buf_puts(&g, "memplan-graph 1\n");
    for (int i = 0; i < 10; i++) mp_buf_printf(&g, "graph g%d\ntensor t 16\nnode placeholder out=t\nnode output in=t\nend\n", i);
    mp_err err;
    mp_program *p = mp_graph_parse(g.data, g.len, "g.mpg", &err);
    cr_assert_not_null(p, "%s", err.msg);
    static const int steps[3] = {1, -1, 3};
    for (int k = 0; k < 3; k++) {
        mp_buf t;
        mp_buf_init(&t);
        mp_buf_puts(&t, "memplan-plan 1\noptions alignment=16 alloc_inputs=1 alloc_outputs=1 alloc_mutable=1 "
                        "per_device=0 algo=opt\n");
        for (int q = 0, i = steps[k] < 0 ? 9 : 0; q < 10; q++, i = (i + steps[k] + 10) % 10)
            mp_buf_printf(&t, "graph g%d\nbuffers 0 16\ndevices cpu:0 cpu:0\nend\n", i);
        mp_buf_puts(&t, "graph nosuch\nbuffers 0 16\ndevices cpu:0 cpu:0\nend\n");
        mp_plan *plan = mp_plan_parse(t.data, t.len, "p.mpp", p, &err);
        cr_assert_not_null(plan, "step %d: %s", steps[k], err.msg);
        cr_assert_eq(plan->n_graphs, 11);
        for (uint32_t b = 0; b < 10; b++)
            cr_assert_eq(plan->graphs[b].graph, atoi(plan->graphs[b].name + 1), "step %d: %s resolved to %d",
                         steps[k], plan->graphs[b].name, plan->graphs[b].graph);
        cr_assert_eq(plan->graphs[10].graph, -1);
        mp_plan_free(plan);
        mp_buf_free(&t);
    }
    mp_program_free(p);
    mp_buf_free(&g);
}

/* An operand the parser resolved: node, 0 for in= or 1 for out=, the
 * position in that list, and the tensor it must be. */
typedef struct operand_want {
    uint32_t node, out, k;
    int32_t tensor;
} operand_want;

static void expect_operands(const char *text, const operand_want *w, size_t n) {
    mp_program *p = must_parse(text);
    const mp_graphdef *g = &p->graphs[0];
    for (size_t i = 0; i < n; i++) {
        const mp_node *nd = &g->nodes[w[i].node];
        int32_t got = (w[i].out ? nd->out : nd->in)[w[i].k];
        cr_assert_eq(got, w[i].tensor, "node %u %s[%u]: tensor %d (%s), want %d", w[i].node,
                     w[i].out ? "out" : "in", w[i].k, got, g->tensors[got].name, w[i].tensor);
    }
    mp_program_free(p);
}

/* The parser guesses a name from the tensors it found last (core/
 * graph_lookup.c); a guess that is a longer name with the same start must
 * not be taken.  Here the tensor after q is x10 while the name is x1. */
Test(format, a_guessed_name_is_the_whole_name) {
    static const operand_want w[] = {{2, 1, 0, 3}, {3, 1, 0, 2}, {4, 0, 1, 3}};
    expect_operands(HDR "graph g\ntensor p 4\ntensor q 4\ntensor x10 4\ntensor x1 4\n"
                        "node placeholder out=p\nnode call in=p out=q\nnode call in=q out=x1\n"
                        "node call in=x1 out=x10\nnode output in=x10,x1,q\nend\n",
                    w, sizeof w / sizeof w[0]);
}

/* t170680 and t219640 have the same hash (mp_strmap_hash: 0xafdfbf0d).
 * A guess is checked on the hash first, then on the name: the stream
 * after p guesses t170680 (tensor 1) when t219640 (2) is read, and the
 * recent-tensor slot holds t219640 when t170680 is read.  Taking either
 * would give the other tensor. */
Test(format, a_guess_with_the_same_hash_is_not_taken) {
    cr_assert_eq(mp_strmap_hash("t170680", 7), mp_strmap_hash("t219640", 7));
    static const operand_want w[] = {{1, 1, 0, 2}, {2, 0, 0, 2}, {2, 1, 0, 1}, {3, 0, 0, 1}};
    expect_operands(HDR "graph g\ntensor p 4\ntensor t170680 4\ntensor t219640 4\n"
                        "node placeholder out=p\nnode call in=p out=t219640\n"
                        "node call in=t219640 out=t170680\nnode output in=t170680\nend\n",
                    w, sizeof w / sizeof w[0]);
}

/* The window (core/graph_lookup.c) hashes the tensors declared after the
 * one found last: reading t219640 after p, it meets t170680 first, with
 * the same hash; taking it would give tensor 2 for 3.  Then t170680 is
 * read while the recent-tensor slot holds t219640. */
Test(format, a_window_guess_with_the_same_hash_is_not_taken) {
    static const operand_want w[] = {{1, 1, 0, 3}, {1, 1, 1, 1}, {2, 0, 0, 3}, {2, 1, 0, 2}, {3, 0, 0, 2}};
    expect_operands(HDR "graph g\ntensor p 4\ntensor a 4\ntensor t170680 4\ntensor t219640 4\n"
                        "node placeholder out=p\nnode call in=p out=t219640,a\n"
                        "node call in=t219640 out=t170680\nnode output in=t170680\nend\n",
                    w, sizeof w / sizeof w[0]);
}

/* Names over two letters, so that many are the start of another: every
 * name a node reads resolves to the tensor of that name. */
Test(format, every_name_resolves_to_its_tensor) {
    char names[64][8];
    uint64_t x = 7;
    mp_buf b;
    mp_buf_init(&b);
    mp_buf_puts(&b, HDR "graph g\n");
    for (int i = 0; i < 64; i++) { /* a..bbbbb, distinct: i's binary digits after a leading 1 */
        int n = 0;
        for (int v = i + 2; v > 1; v >>= 1) names[i][n++] = (char)('a' + (v & 1));
        names[i][n] = 0;
        mp_buf_printf(&b, "tensor %s 4\n", names[i]);
    }
    mp_buf_printf(&b, "node placeholder out=%s\n", names[0]);
    for (int i = 1; i < 64; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        mp_buf_printf(&b, "node call in=%s,%s out=%s\n", names[(x >> 33) % (uint64_t)i],
                      names[i - 1], names[i]);
    }
    mp_buf_printf(&b, "node output in=%s\nend\n", names[63]);
    mp_program *p = must_parse(b.data);
    const mp_graphdef *g = &p->graphs[0];
    for (uint32_t k = 0; k < g->n_nodes; k++) {
        const mp_node *nd = &g->nodes[k];
        for (uint32_t j = 0; j < nd->n_out; j++) cr_assert_str_eq(g->tensors[nd->out[j]].name, names[k]);
        if (k > 0 && k < 64) cr_assert_str_eq(g->tensors[nd->in[1]].name, names[k - 1]);
    }
    mp_buf_free(&b);
    mp_program_free(p);
}

/* Text from a file comes a window (1 MiB) at a time (core/lines.c): lines
 * across the windows' edges, one longer than a window, CRLF and a last
 * line without a newline read as from memory, and so do the lines ahead
 * of any line (read again from the file past the window). */
static char *temp_file_with(const char *text, size_t len) {
    static char path[64];
    snprintf(path, sizeof path, "/tmp/memplan-lines-%d-XXXXXX", (int)getpid());
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    FILE *f = fdopen(fd, "wb");
    cr_assert_eq(fwrite(text, 1, len, f), len);
    fclose(f);
    return path;
}

typedef struct ahead_sum {
    size_t lines, bytes;
} ahead_sum;

static bool sum_ahead(void *ctx, const char *b, const char *e) {
    ahead_sum *a = ctx;
    a->lines++;
    a->bytes += (size_t)(e - b);
    return true;
}

Test(format, a_file_reads_as_the_same_lines) {
    mp_buf b;
    mp_buf_init(&b);
    for (int i = 0; i < 150000; i++) mp_buf_printf(&b, i % 3 ? "line %d\n" : "line %d\r\n", i);
    for (int i = 0; i < 300000; i++) mp_buf_puts(&b, "long "); /* 1.5 MB on one line */
    mp_buf_puts(&b, "\n\nlast");
    const char *path = temp_file_with(b.data, b.len);
    mp_lines from_file, from_text;
    mp_err err;
    cr_assert_eq(mp_lines_open(&from_file, path, &err), MP_OK, "%s", err.msg);
    mp_lines_text(&from_text, b.data, b.len);
    const char *s1, *e1, *s2, *e2;
    size_t n = 0;
    while (mp_lines_next(&from_text, &s2, &e2)) {
        cr_assert(mp_lines_next(&from_file, &s1, &e1), "the file ended at line %zu", n);
        cr_assert_eq(e1 - s1, e2 - s2, "line %zu", n);
        cr_assert(memcmp(s1, s2, (size_t)(e1 - s1)) == 0, "line %zu", n);
        if (n % 50000 == 7) { /* what is ahead: past the window, read again */
            ahead_sum a1 = {0, 0}, a2 = {0, 0};
            mp_lines_ahead(&from_file, sum_ahead, &a1);
            mp_lines_ahead(&from_text, sum_ahead, &a2);
            cr_assert_eq(a1.lines, 150003 - n - 1, "after line %zu", n);
            cr_assert_eq(a1.lines, a2.lines);
            cr_assert_eq(a1.bytes, a2.bytes, "after line %zu", n);
        }
        n++;
    }
    cr_assert_not(mp_lines_next(&from_file, &s1, &e1));
    cr_assert_eq(n, 150003);
    cr_assert_eq(mp_lines_error(&from_file, &err), MP_OK);
    mp_lines_close(&from_file);
    unlink(path);
    mp_buf_free(&b);
}

/* A graph loaded from a file is the one parsed from memory, with view=
 * and inplace= names that the window has moved past by the graph's end. */
Test(format, a_loaded_graph_is_the_parsed_one) {
    mp_buf b;
    mp_buf_init(&b);
    mp_buf_puts(&b, HDR "graph g\ntensor base 64\ntensor v 64 view=base\ntensor ip 64 inplace=base\n");
    for (int i = 0; i < 60000; i++) mp_buf_printf(&b, "tensor t%d %d\n", i, 16 + i % 7);
    mp_buf_puts(&b, "node placeholder out=base\nnode call in=base out=ip\nnode call in=v,ip out=t0\n");
    for (int i = 1; i < 60000; i++) mp_buf_printf(&b, "node call in=t%d out=t%d\n", i - 1, i);
    mp_buf_puts(&b, "node output in=t59999\nend\n");
    const char *path = temp_file_with(b.data, b.len);
    mp_err err;
    mp_program *loaded = mp_graph_load(path, &err);
    cr_assert_not_null(loaded, "%s", err.msg);
    mp_program *parsed = must_parse(b.data);
    mp_buf w1, w2;
    mp_buf_init(&w1);
    mp_buf_init(&w2);
    mp_graph_write(loaded, &w1);
    mp_graph_write(parsed, &w2);
    cr_assert_str_eq(w1.data, w2.data);
    cr_assert_eq(loaded->graphs[0].tensors[1].view_base, 0);
    cr_assert_eq(loaded->graphs[0].tensors[2].inplace_base, 0);
    unlink(path);
    mp_program_free(loaded);
    mp_program_free(parsed);
    mp_buf_free(&w1);
    mp_buf_free(&w2);
    mp_buf_free(&b);
}

/* The plan writer's integers are written without printf: each as %lld
 * would write it, at the edges too. */
Test(format, integers_are_written_as_printf_writes_them) {
    const int64_t v[] = {0, 1, -1, 9, 10, -10, 123456789, INT64_MAX, INT64_MIN, INT64_MIN + 1};
    for (size_t i = 0; i < sizeof v / sizeof *v; i++) {
        mp_buf b;
        mp_buf_init(&b);
        mp_buf_i64(&b, v[i]);
        mp_buf_put(&b, "", 1);
        char want[32];
        snprintf(want, sizeof want, "%lld", (long long)v[i]);
        cr_assert_str_eq(b.data, want);
        mp_buf_free(&b);
    }
}

/* The unsigned writers at every digit count: each power of ten, one
 * below and one above it, UINT64_MAX and random values, as %llu writes
 * them; mp_put_u64 stops where it says and writes nothing past it. */
static void check_u64(uint64_t v) {
    char want[32], room[MP_U64_DIGITS + 8];
    snprintf(want, sizeof want, "%llu", (unsigned long long)v);
    memset(room, '#', sizeof room);
    char *end = mp_put_u64(room + 1, v);
    cr_assert_eq((size_t)(end - room - 1), strlen(want), "%s", want);
    cr_assert(memcmp(room + 1, want, strlen(want)) == 0, "%s", want);
    cr_assert(room[0] == '#' && *end == '#', "%s: wrote outside its digits", want);
    mp_buf b;
    mp_buf_init(&b);
    mp_buf_u64(&b, v);
    cr_assert_str_eq(b.data, want);
    mp_buf_free(&b);
}

Test(format, unsigned_integers_are_written_as_printf_writes_them) {
    uint64_t p = 1;
    for (int k = 0; k < MP_U64_DIGITS; k++, p *= 10) {
        check_u64(p);
        check_u64(p - 1);
        check_u64(p + 1);
        check_u64(p * 5 + 3);
    }
    check_u64(UINT64_MAX);
    check_u64(UINT64_MAX - 1);
    uint64_t x = 0x9e3779b97f4a7c15ull;
    for (int i = 0; i < 2000; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        check_u64(x >> (i % 64));
    }
}

/* An entry line names every method, however many (issue 45, B23: 1.8.0
 * took 31, the other lines' field limit, and said "too many fields on one
 * line"); every other line keeps the limit. */
Test(format, an_entry_line_names_any_number_of_methods) {
    mp_buf b;
    mp_buf_init(&b);
    mp_buf_puts(&b, "memplan-graph 1\nentry");
    for (int i = 0; i < 100; i++) mp_buf_printf(&b, " m%d", i);
    mp_buf_puts(&b, "\n");
    for (int i = 0; i < 100; i++)
        mp_buf_printf(&b, "graph m%d\ntensor x%d %d\nnode placeholder out=x%d\nnode output in=x%d\nend\n", i, i,
                      4 * (i + 1), i, i);
    mp_program *p = must_parse(b.data);
    cr_assert_eq(p->n_entries, 100);
    mp_options o;
    mp_options_default(&o);
    mp_err err;
    mp_plan *plan = mp_plan_program(p, &o, &err);
    cr_assert_not_null(plan, "%s", err.msg);
    mp_plan_free(plan);
    mp_program_free(p);
    mp_buf_free(&b);
}
