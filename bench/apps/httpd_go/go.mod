module weft/bench/httpd_go

go 1.21
