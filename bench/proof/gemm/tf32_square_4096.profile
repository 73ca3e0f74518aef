kb-v01
