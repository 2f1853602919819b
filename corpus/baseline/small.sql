-- memplan gate baseline: plan quality of `memplan harness --seed 1 --count 300`
-- regenerate: memplan gate --db FILE --baseline results/baseline.sql --update
BEGIN TRANSACTION;
CREATE TABLE baseline(graph TEXT NOT NULL, algo TEXT NOT NULL, options TEXT,
  total_bytes INTEGER, lower_bound INTEGER, ratio REAL, verify TEXT,
  PRIMARY KEY(graph, algo));
CREATE TABLE baseline_run(seed INTEGER, count INTEGER, options TEXT, version TEXT);
INSERT INTO baseline_run VALUES(1,300,'--seed 1 --count 300 --algos greedy,naive,opt,tflm,bestfit','1.3.0');
INSERT INTO baseline VALUES('h1-0','bestfit','--alignment 24 --profile mixed --tensors 25 --depth 0 --devices cpu:0,cuda:0,cuda:1,cpu:1',33629712,33629712,1.000000,'valid');
INSERT INTO baseline VALUES('h1-0','greedy','--alignment 24 --profile mixed --tensors 25 --depth 0 --devices cpu:0,cuda:0,cuda:1,cpu:1',33629712,33629712,1.000000,'valid');
INSERT INTO baseline VALUES('h1-0','naive','--alignment 24 --profile mixed --tensors 25 --depth 0 --devices cpu:0,cuda:0,cuda:1,cpu:1',52139856,33629712,1.550410,'valid');
INSERT INTO baseline VALUES('h1-0','opt','--alignment 24 --profile mixed --tensors 25 --depth 0 --devices cpu:0,cuda:0,cuda:1,cpu:1',33629712,33629712,1.000000,'valid');
INSERT INTO baseline VALUES('h1-0','tflm','--alignment 24 --profile mixed --tensors 25 --depth 0 --devices cpu:0,cuda:0,cuda:1,cpu:1',33629712,33629712,1.000000,'valid');
INSERT INTO baseline VALUES('h1-1','bestfit','--alignment 16 --profile transformer --tensors 302 --depth 1 --devices cpu:0',10747904,10747904,1.000000,'valid');
INSERT INTO baseline VALUES('h1-1','greedy','--alignment 16 --profile transformer --tensors 302 --depth 1 --devices cpu:0',11010048,10747904,1.024390,'valid');
INSERT INTO baseline VALUES('h1-1','naive','--alignment 16 --profile transformer --tensors 302 --depth 1 --devices cpu:0',101265408,10747904,9.421875,'valid');
INSERT INTO baseline VALUES('h1-1','opt','--alignment 16 --profile transformer --tensors 302 --depth 1 --devices cpu:0',10747904,10747904,1.000000,'valid');
INSERT INTO baseline VALUES('h1-1','tflm','--alignment 16 --profile transformer --tensors 302 --depth 1 --devices cpu:0',10747904,10747904,1.000000,'valid');
INSERT INTO baseline VALUES('h1-10','bestfit','--alignment 16 --no-alloc-mutable --profile mixed --tensors 103 --depth 1 --devices cpu:0,cuda:0',459666688,459666624,1.000000,'valid');
INSERT INTO baseline VALUES('h1-10','greedy','--alignment 16 --no-alloc-mutable --profile mixed --tensors 103 --depth 1 --devices cpu:0,cuda:0',482736608,459666624,1.050189,'valid');
COMMIT;
