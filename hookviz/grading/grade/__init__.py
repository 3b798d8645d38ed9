"""`hookviz grade`: a folder of submissions, locally or on a Dask cluster, or an assignment folder."""
