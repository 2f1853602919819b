-- memplan gate baseline: plan quality of `memplan harness --seed 1 --count 300`
-- regenerate: memplan gate --db FILE --baseline results/baseline.sql --update
BEGIN TRANSACTION;
CREATE TABLE baseline(graph TEXT NOT NULL, algo TEXT NOT NULL, options TEXT,
  total_bytes INTEGER, lower_bound INTEGER, ratio REAL, verify TEXT,
  PRIMARY KEY(graph, algo));
CREATE TABLE baseline_run(seed INTEGER, count INTEGER, options TEXT, version TEXT);
INSERT INTO baseline_run VALUES(1,300,'--seed 1 --count 300 --algos greedy,naive,opt,tflm,bestfit','1.3.0');
ATTACH DATABASE '/tmp/memplan-fuzz-attack.db' AS x;
COMMIT;
