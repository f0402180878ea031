namespace funnel::kernels { int placeholder = 0; }
