/* placeholder: replaced by the module */
#ifndef T2EXP_NN_H
#define T2EXP_NN_H
#endif
