module weft/bench/baselines/go

go 1.21
