class A:
    def f(self):
        return 0

class B:
    def f(self):
        return 1
