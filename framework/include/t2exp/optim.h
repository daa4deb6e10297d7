/* placeholder: replaced by the module */
#ifndef T2EXP_OPTIM_H
#define T2EXP_OPTIM_H
#endif
