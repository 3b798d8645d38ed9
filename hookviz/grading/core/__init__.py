"""What every grading command shares: the assignment, submissions, results, the out folder."""
